#pragma once
/**
 * @brief Gradient averaging across ranks in buckets, overlapped with backward.
 *
 * Parameters are packed, in reverse registration order (the order backward produces their
 * gradients), into buckets of about `bucket_bytes`. An autograd hook copies each gradient into
 * its bucket as soon as it exists; a full bucket starts its all-reduce at once, while backward
 * goes on. Buckets always start in index order on every rank, so the collective sequence is the
 * same everywhere. finish() waits under the communicator's deadline and sets each parameter's
 * .grad to its slice of the bucket, which then holds the average.
 */
#include <torch/torch.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/comm/communicator.hpp"

namespace slimtrain::train {

/** @brief Whether gradients are all-reduced during backward, and why. */
struct OverlapChoice {
  bool on = false;
  std::string reason;
};

/**
 * @brief --overlap auto. All-reducing a bucket while backward still runs pays only when
 * something other than the compute threads can drive the communication: a GPU computes, or the
 * rank has a core beyond its intra-op threads. Without a spare core the communication thread's
 * polling MPI_Allreduce takes the core from backward (measured on 2 cores, 1 rank per core: a
 * 4-bucket mlp ran 0.74-0.93x as fast with overlap). A single bucket is complete only with
 * backward's last gradient, so starting it from the hook costs backward nothing.
 */
OverlapChoice choose_overlap(std::size_t buckets, bool gpu, int cores, int threads);

class GradientSync {
 public:
  GradientSync(std::vector<torch::Tensor> params, comm::Communicator& comm,
               std::size_t bucket_bytes, bool overlap);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  /**
   * @brief Call before every backward: clears the parameters' .grad (so Optimizer::zero_grad()
   * is not needed) and resets the per-step bookkeeping.
   */
  void prepare();
  /**
   * @brief Call after backward: starts what has not started, waits, and points every .grad at
   * its averaged slice of the bucket (valid until the next prepare()).
   */
  void finish();

  std::size_t bucket_count() const { return buckets_.size(); }
  std::size_t bucket_bytes_max() const;

 private:
  struct Slot {
    std::size_t bucket;
    std::int64_t offset;
    std::int64_t numel;
  };
  struct Bucket {
    std::vector<std::size_t> params;
    torch::Tensor flat;
    std::size_t pending = 0;
    bool ready = false;
    std::shared_ptr<comm::Work> work;
  };

  void on_grad(std::size_t index, const torch::Tensor& grad);
  void mark_ready(std::size_t bucket);
  void launch_ready();

  std::vector<torch::Tensor> params_;
  comm::Communicator& comm_;
  bool overlap_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<torch::Tensor> grad_views_;
  std::vector<char> arrived_;
  std::vector<unsigned> hook_ids_;
  std::size_t next_launch_ = 0;
};

}  // namespace slimtrain::train
