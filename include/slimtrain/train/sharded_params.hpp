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
 *
 * The gather can run while the next forward does (--overlap-gather): the buckets are issued in
 * forward order (the last bucket holds the first layers), and forward waits for each layer's
 * buckets just before it uses them (await); anything else that reads the weights (evaluation,
 * checkpoints) and the next optimizer step wait for all of them (wait_gathered).
 */
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
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

/** @brief Elements [from, from + count) of parameter `param` (row-major), any dtype: where
 * --shard parameters takes each rank's piece from (a checkpoint's slices, say). */
using PieceSource =
    std::function<torch::Tensor(std::size_t param, std::int64_t from, std::int64_t count)>;

class ShardedParams {
 public:
  /**
   * @brief Moves `params`' values into the buffer; the layout must outlive this. With a
   * `gather_plane` (--shard parameters) each bucket has a buffer of its own, held only while its
   * layers compute (layer_gate.hpp) and gathered over that plane: the rank keeps its pieces
   * apart, read from `source` where given (parameters without memory are read only through it),
   * else from the parameters. The plane must outlive this.
   */
  ShardedParams(const std::vector<torch::Tensor>& params, const FlatLayout& layout, int rank,
                comm::DataPlane* gather_plane = nullptr, const PieceSource& source = {});

  /** @brief This rank's piece of each bucket: what its optimizer updates. */
  const std::vector<torch::Tensor>& shard() const { return shard_; }
  std::vector<OptimizedSpan> spans() const;
  /** @brief Points each shard tensor's .grad at the matching averaged gradient (once). */
  void attach_grads(const std::vector<torch::Tensor>& shard_grads);
  /** @brief Every rank's updated pieces to every rank: one in-place all-gather per bucket. */
  void gather(comm::DataPlane& plane) {
    start_gather(plane);
    wait_gathered();
  }
  /** @brief Issues gather()'s all-gathers, the first layers' buckets first, and returns. */
  void start_gather(comm::DataPlane& plane);
  /** @brief Waits for the buckets that hold any of `weights` (parameters of the model). */
  void await(const std::vector<torch::Tensor>& weights);
  /** @brief Waits for the gathers of `buckets` still in flight. */
  void await_buckets(const std::vector<std::size_t>& buckets);
  /** @brief Waits for every bucket still being gathered; then the weights are whole. */
  void wait_gathered();
  /** @brief Waits for the gathers issued, gathering nothing more. */
  void finish_in_flight();
  /** @brief Whether some bucket's gather was issued and not yet waited for. */
  bool gathering() const { return in_flight_ > 0; }
  /**
   * @brief The global L2 norm of the gradient from the shards (one all-reduce of a sum of
   * squares), the shards scaled so it is at most `max_norm`; returns the norm before clipping.
   */
  torch::Tensor clip_grad_norm(double max_norm, comm::DataPlane& plane);
  /** @brief Bytes of the flat buffer (every weight, padding included). */
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(layout_.padded_numel()) * 4; }

  // --shard parameters (ZeRO-3): the buckets' weights exist only while gathered.
  bool holds_weights() const { return bucket_buffers_.empty(); }
  /** @brief The buckets that hold any of `weights`, in bucket order. */
  std::vector<std::size_t> buckets_of(const std::vector<torch::Tensor>& weights) const;
  /** @brief Issues the all-gather of each of `buckets` not held or arriving (memory allocated),
   * over the constructor's plane. */
  void prefetch(const std::vector<std::size_t>& buckets);
  /** @brief Frees every held bucket not in `keep` and not arriving. */
  void release_except(const std::vector<std::size_t>& keep);
  /** @brief --shard parameters: this rank's pieces read anew from `values` (a resume reading
   * only its own elements of a checkpoint); no bucket is held after. */
  void refill(const PieceSource& values);
  /** @brief Bytes of the bucket buffers held now, and the most held at once since the start. */
  std::uint64_t held_bytes() const { return held_bytes_; }
  std::uint64_t peak_held_bytes() const { return peak_held_bytes_; }
  void reset_peak() { peak_held_bytes_ = held_bytes_; }

 private:
  void hold(std::size_t bucket);
  void free_bucket(std::size_t bucket);
  void fill_piece(std::size_t bucket, const PieceSource& values);
  const FlatLayout& layout_;
  torch::Tensor flat_;
  std::vector<ShardPiece> pieces_;
  std::vector<torch::Tensor> shard_;
  std::unordered_map<const void*, std::size_t> bucket_of_;  ///< a parameter's TensorImpl -> bucket
  std::vector<std::shared_ptr<comm::Work>> gathers_;        ///< per bucket; null once waited for
  std::size_t in_flight_ = 0;
  std::vector<torch::Tensor> bucket_buffers_;  ///< --shard parameters: one per bucket
  std::vector<char> held_;                     ///< per bucket: its buffer has memory
  std::uint64_t held_bytes_ = 0, peak_held_bytes_ = 0;
  comm::DataPlane* plane_ = nullptr;               ///< --shard parameters: where the gathers go
  std::vector<std::vector<std::size_t>> members_;  ///< --shard parameters: each bucket's params
  std::vector<std::int64_t> numels_;               ///< per parameter
};

}  // namespace slimtrain::train
