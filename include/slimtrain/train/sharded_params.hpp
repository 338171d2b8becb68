#pragma once
/**
 * @brief --shard optimizer and gradients: the trainable parameters moved into one flat buffer
 * (FlatLayout), and this rank's shard of it as the tensors its optimizer updates.
 *
 * Every parameter becomes a view of the buffer in contiguous (row-major) layout; the optimizer
 * holds one tensor per bucket, this rank's piece, whose .grad is the matching piece of the
 * averaged gradient (GradientSync::shard_grads). After the optimizer step each bucket's updated
 * pieces are all-gathered in place, so every rank holds every weight again before the next
 * forward. Optimizer state exists for this rank's pieces only: 1/N of it per rank.
 */
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/train/flat_layout.hpp"

namespace slimtrain::train {

/** @brief An optimised tensor and the logical elements it holds (its first `logical.length`). */
struct OptimizedSpan {
  torch::Tensor tensor;
  LogicalRange logical;
};

/** @brief The spans of unsharded training: each parameter whole, at its logical place. */
std::vector<OptimizedSpan> parameter_spans(const std::vector<torch::Tensor>& params,
                                           const FlatLayout& layout);

class ShardedParams {
 public:
  /** @brief Moves `params`' values into the buffer; the layout must outlive this. */
  ShardedParams(const std::vector<torch::Tensor>& params, const FlatLayout& layout, int rank);

  /** @brief This rank's piece of each bucket: what its optimizer updates. */
  const std::vector<torch::Tensor>& shard() const { return shard_; }
  std::vector<OptimizedSpan> spans() const;
  /** @brief Points each shard tensor's .grad at the matching averaged gradient (once). */
  void attach_grads(const std::vector<torch::Tensor>& shard_grads);
  /** @brief Every rank's updated pieces to every rank: one in-place all-gather per bucket. */
  void gather(comm::DataPlane& plane);
  /**
   * @brief The global L2 norm of the gradient from the shards (one all-reduce of a sum of
   * squares), the shards scaled so it is at most `max_norm`; returns the norm before clipping.
   */
  double clip_grad_norm(double max_norm, comm::DataPlane& plane);
  /** @brief Bytes of the flat buffer (every weight, padding included). */
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(flat_.nbytes()); }

 private:
  const FlatLayout& layout_;
  torch::Tensor flat_;
  std::vector<ShardPiece> pieces_;
  std::vector<torch::Tensor> shard_;
};

}  // namespace slimtrain::train
