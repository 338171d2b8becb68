#pragma once
/**
 * @brief The host communicator: MPI over host memory, the engine under the control plane and the
 * CPU data plane. Every operation carries a deadline; an operation whose caller timed out is
 * never cancelled: it stays queued and drains once the late ranks arrive, so the operations that
 * follow on the same communicator stay matched across ranks.
 *
 * Device memory never comes here: GPU gradients go through comm::DataPlane (NCCL), and parts
 * that decide or report use comm::ControlPlane, whose interface takes only typed host values.
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/comm/types.hpp"

namespace slimtrain::runtime {
class Runtime;
}

namespace slimtrain::comm {

/** @brief Handle of one enqueued operation. */
class Work {
 public:
  virtual ~Work() = default;
  /**
   * @brief Returns when the operation is done. Throws TimeoutError (naming the missing ranks)
   * once its deadline plus the inspection grace has passed, CommError when it failed.
   */
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /** @brief "control", "eval", "data", ...: names the communicator in errors and reports. */
  virtual const std::string& name() const = 0;
  /** @brief The size term of later operations' deadlines (DeadlinePolicy::floor_bytes_per_s). */
  virtual void set_floor_bandwidth(double bytes_per_s) = 0;

  /**
   * @brief In-place all-reduce of `count` host elements. The operation holds `keep_alive` until
   * it has really finished, even after the caller timed out.
   */
  virtual std::shared_ptr<Work> all_reduce_async(void* data, std::size_t count, DType dtype,
                                                 ReduceOp op, const OpOptions& options = {},
                                                 std::shared_ptr<void> keep_alive = nullptr) = 0;
  /**
   * @brief Blocking all-reduce. Payloads up to kStagedBytes are staged in a buffer the operation
   * owns, so a timeout leaves `data` free; above that, after a TimeoutError `data` is still in use
   * by the draining operation: keep it alive (or use all_reduce_async with keep_alive).
   */
  void all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op,
                  const OpOptions& options = {});

  /** @brief In-place broadcast of `count` elements from `root`; keep_alive as for all_reduce. */
  virtual std::shared_ptr<Work> broadcast_async(void* data, std::size_t count, DType dtype,
                                                int root, const OpOptions& options = {},
                                                std::shared_ptr<void> keep_alive = nullptr) = 0;
  /** @brief Blocking broadcast; the same staging rule as all_reduce. */
  void broadcast(void* data, std::size_t count, DType dtype, int root,
                 const OpOptions& options = {});

  /**
   * @brief `in` holds size() blocks of `count` elements; `out` (which must not overlap `in`)
   * receives block rank() reduced over all ranks. Chunked like all_reduce, keep_alive likewise.
   */
  virtual std::shared_ptr<Work> reduce_scatter_async(
      const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
      const OpOptions& options = {}, std::shared_ptr<void> keep_alive = nullptr) = 0;
  /**
   * @brief `in` is this rank's block of `count` elements; `out` receives every rank's block in
   * rank order. `in` may be `out`'s own block (in place).
   */
  virtual std::shared_ptr<Work> all_gather_async(const void* in, void* out, std::size_t count,
                                                 DType dtype, const OpOptions& options = {},
                                                 std::shared_ptr<void> keep_alive = nullptr) = 0;

  virtual void barrier(const OpOptions& options = {}) = 0;
  /** @brief Logical AND of `mine` over all ranks: the primitive every consistent decision uses. */
  virtual bool agree(bool mine, const OpOptions& options = {}) = 0;
  /**
   * @brief One all-reduce of a record whose fields each carry their own operator (see Field).
   * Every rank must pass the same operators in the same order; a field whose operator differs
   * between ranks comes back with op 0.
   */
  virtual std::vector<Field> all_reduce_fields(std::vector<Field> fields,
                                               const OpOptions& options = {}) = 0;
  /** @brief Every rank's `mine` (the same length on every rank), concatenated in rank order. */
  virtual std::vector<std::int64_t> all_gather(const std::vector<std::int64_t>& mine,
                                               const OpOptions& options = {}) = 0;
  /** @brief Payload bytes this rank has passed to all_reduce and broadcast so far. */
  virtual std::uint64_t bytes_reduced() const = 0;
  /** @brief Writes the last operations to the log (done automatically on a timeout). */
  virtual void dump_flight_recorder() const = 0;

  /** @brief Blocking payloads up to this size are copied into the operation (see all_reduce). */
  static constexpr std::size_t kStagedBytes = 1u << 20;
};

/** @brief MPI backend: a duplicate of MPI_COMM_WORLD and one communication thread. Collective. */
std::unique_ptr<Communicator> make_mpi_communicator(const runtime::Runtime& runtime,
                                                    std::string name,
                                                    const CommConfig& config = {});

}  // namespace slimtrain::comm
