#pragma once
/**
 * @brief The data plane: gradient buckets and the initial weight broadcast, as tensors on the
 * model's device. MPI over host memory on CPU, NCCL over device memory on GPU.
 *
 * It takes nothing but tensors, and checks each one against its device: host memory cannot reach
 * NCCL (nor a CUDA tensor MPI). Decisions and host values never come here (control_plane.hpp), so
 * an evaluation never touches NCCL and a timed-out one cannot take NCCL down with it.
 *
 * Every rank keeps a running fingerprint of what it issued here (sequence, kind, dtype, element
 * count) and a log of the latest operations. The trainer compares fingerprints across ranks at
 * every step over the control plane; on a mismatch the logs name the first diverging operation.
 */
#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/comm/types.hpp"

namespace slimtrain::runtime {
class Runtime;
}

namespace slimtrain::comm {

struct PlaneFailure;

/** @brief One operation a rank issued on its data plane, as desync reports name it. */
struct IssuedOp {
  std::uint64_t seq = 0;
  OpKind kind = OpKind::none;
  DType dtype = DType::f32;
  std::uint64_t count = 0;
  std::string tag;
  std::uint64_t bytes() const { return count * dtype_size(dtype); }
};

/** @brief The DType of `t`; ConfigError for dtypes reductions do not take (bool, int32, ...). */
DType dtype_of(const torch::Tensor& t);

class DataPlane {
 public:
  virtual ~DataPlane() = default;
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  virtual const std::string& name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /** @brief Where this plane's tensors must live: cpu for MPI, cuda:N for NCCL. */
  const torch::Device& device() const { return device_; }

  /**
   * @brief In-place all-reduce of a contiguous tensor on device(); the operation keeps the
   * tensor alive until it has finished, even after the caller timed out. ConfigError for a
   * tensor elsewhere (host memory on a CUDA plane, say), strided, or of an unsupported dtype.
   */
  std::shared_ptr<Work> all_reduce_async(const torch::Tensor& t, ReduceOp op,
                                         const OpOptions& options = {});
  void all_reduce(const torch::Tensor& t, ReduceOp op, const OpOptions& options = {});
  /**
   * @brief In-place broadcast from `root`, the same checks; a tensor of a type reductions do not
   * take (bool, int32, ...) travels as its bytes.
   */
  void broadcast(const torch::Tensor& t, int root, const OpOptions& options = {});

  /**
   * @brief Reduce-scatter: `input` holds size() equal blocks, and `output` (a tensor of one
   * block's elements, of the same dtype, not overlapping `input`) receives this rank's block
   * reduced over all ranks. Both stay alive until the operation has finished.
   */
  std::shared_ptr<Work> reduce_scatter_async(const torch::Tensor& input,
                                             const torch::Tensor& output, ReduceOp op,
                                             const OpOptions& options = {});
  /**
   * @brief All-gather: `input` is this rank's block; `output` (size() blocks) receives every
   * rank's in rank order. `input` may be `output`'s own block of this rank (in place).
   */
  std::shared_ptr<Work> all_gather_async(const torch::Tensor& input, const torch::Tensor& output,
                                         const OpOptions& options = {});

  /**
   * @brief Returns once every operation issued here so far has ended, each within its deadline;
   * throws the plane's failure otherwise (TimeoutError naming the ranks, CommError). Called
   * before anything reads the weights to write or evaluate them: a checkpoint never holds the
   * results of an operation that failed or was aborted. On a GPU the host waits for the device
   * here (once per checkpoint or evaluation, never in a steady step).
   *
   * A failure is kept: once an operation of this plane has failed or missed its deadline (its
   * wait threw, or the NCCL watchdog found it), settle() and throw_if_failed() throw it from then
   * on, even after the late operation drained (the MPI engine lets it, matched across ranks): a
   * data-plane failure ends training, and nothing written after it may hold its results.
   */
  void settle();
  /**
   * @brief Throws the failure this plane has seen so far, kept or found by its backend (the
   * NCCL watchdog's); never waits. A value the host reads back from the device after an abort
   * (the step's flags, a step late) is acted on only after this.
   */
  void throw_if_failed() const;

  /** @brief Running hash of every operation issued so far (equal on all ranks when in step). */
  std::uint64_t fingerprint() const;
  /** @brief Operations issued so far (the sequence number of the latest). */
  std::uint64_t ops_issued() const;
  /** @brief The logged operations with seq > `seq`, oldest first (the last kLogSize at most). */
  std::vector<IssuedOp> issued_after(std::uint64_t seq) const;
  static constexpr std::size_t kLogSize = 64;

  /**
   * @brief The size term of later operations' deadlines, from the bandwidth measured at start-up
   * (see measure_bandwidth).
   */
  virtual void set_floor_bandwidth(double bytes_per_s) = 0;

  virtual std::uint64_t bytes_reduced() const = 0;
  virtual void dump_flight_recorder() const = 0;

 protected:
  explicit DataPlane(torch::Device device);
  virtual std::shared_ptr<Work> start_all_reduce(const torch::Tensor& t, DType dtype, ReduceOp op,
                                                 const OpOptions& options) = 0;
  virtual std::shared_ptr<Work> start_broadcast(const torch::Tensor& t, DType dtype, int root,
                                                const OpOptions& options) = 0;
  virtual std::shared_ptr<Work> start_reduce_scatter(const torch::Tensor& input,
                                                     const torch::Tensor& output, DType dtype,
                                                     ReduceOp op, const OpOptions& options) = 0;
  virtual std::shared_ptr<Work> start_all_gather(const torch::Tensor& input,
                                                 const torch::Tensor& output, DType dtype,
                                                 const OpOptions& options) = 0;
  /** @brief After every operation was waited for: the host waits until they have ended (NCCL:
   * their end events, under the watchdog's deadlines); MPI's waits already did. */
  virtual void settle_issued() {}
  /** @brief Throws what the backend found by itself (the NCCL watchdog); never waits. */
  virtual void throw_if_backend_failed() const {}

 private:
  class TrackedWork;
  /** @brief `work` as the caller gets it: a failure in its wait is kept; unsettled until waited. */
  std::shared_ptr<Work> track(std::shared_ptr<Work> work);
  DType check(const torch::Tensor& t, const char* what) const;
  /** @brief Both tensors checked, of one dtype, `blocks` = input.numel() / output.numel(). */
  DType check_blocks(const torch::Tensor& blocks, const torch::Tensor& block,
                     const char* what) const;
  void record(OpKind kind, DType dtype, std::uint64_t count, const char* tag);

  torch::Device device_;
  mutable std::mutex mutex_;
  std::uint64_t fingerprint_ = 0x736c696d74726169ull;  // "slimtrai"
  std::uint64_t issued_ = 0;
  std::deque<IssuedOp> log_;
  std::shared_ptr<PlaneFailure> failure_;
  std::vector<std::shared_ptr<TrackedWork>> unsettled_;  // issued, not yet waited: settle() waits
};

/**
 * @brief Collective over the world. MPI for a cpu device; NCCL for cuda (ConfigError when built
 * without NCCL). The NCCL plane uses the current CUDA device (runtime::bind_device sets it).
 */
std::unique_ptr<DataPlane> make_data_plane(const runtime::Runtime& runtime,
                                           const torch::Device& device, std::string name,
                                           const CommConfig& config = {});

}  // namespace slimtrain::comm
