#pragma once
/**
 * @brief --shard parameters (ZeRO-3): a layer's weights gathered just before it computes, in
 * forward and again in backward, and freed when it is done; the next layer's gather issued while
 * this one computes.
 *
 * A model that gates its weights (ClassifierImpl::gates_weights) calls the gate before each layer
 * with the layer's weights and its input. An input that carries a gradient opens a segment: the
 * layers from there to the next such input. Forward holds the segment computing (and, with
 * prefetch, the next one, in the order the previous forward ran) and frees the rest. A hook on the
 * segment's input fires in backward once everything after it has its gradients, which is when
 * that segment is done and the one before starts: it frees the segment and gathers the one
 * before (and, with prefetch, the one before that). Autograd keeps the weights it saved as the same
 * tensors, refilled with the same values before it reads them. The first segment is not gathered
 * again when it opened with token ids (an integer input): an embedding lookup's backward reads
 * its input and output gradient, not its weights.
 *
 * The gate also sees the order in which forward first uses each bucket; its reverse is the order
 * in which backward completes them, which the gradient buckets start in (launch_order), so that a
 * bucket of a layer's norm (registered last, used first) does not keep the layer's large
 * gradients waiting, whole, until the layer's backward ends.
 *
 * --activation-checkpointing layers: a layer recomputed in backward runs its forward without
 * autograd, and again in backward with it. Gates reached in the first (a decoder layer's
 * feed-forward gates, inside the layer) add their weights to the segment computing, as any gate
 * whose input needs no gradient does; gates reached in the second, after end_forward(), belong to
 * the segment backward has gathered already: they wait for their weights and change nothing.
 *
 * A gate called outside a training forward and outside autograd (evaluation, under inference
 * mode) holds the layer's weights
 * and frees every other layer's: evaluation gathers layer by layer too, one layer at a time (no
 * prefetch), and every rank runs as many forwards (eval::ShardOptions::forwards_alike), so that
 * the gathers match.
 */
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace slimtrain::train {

class LayerGate {
 public:
  /** @param prefetch whether the next segment is gathered while one computes (memory held for
   * speed, where the gather runs beside the compute: NCCL). */
  LayerGate(ShardedParams& shards, bool prefetch) : shards_(shards), prefetch_(prefetch) {}

  /** @brief A forward starts: its segments are recorded anew (the last ones kept for prefetch). */
  void begin_forward();
  /** @brief The model's gate: `weights` are about to be read by forward; `x` is their input. */
  void before_layer(const std::vector<torch::Tensor>& weights, const torch::Tensor& x);
  /** @brief Segments the last forward opened (for tests and the log). */
  std::size_t segments() const { return segments_.size(); }
  /**
   * @brief The buckets (of `buckets` in all) in the reverse of the order the last forward first
   * used them, then any it did not use in index order: the order backward completes them in.
   * Every rank's forward passes the same gates, so every rank gets the same order.
   */
  std::vector<std::size_t> launch_order(std::size_t buckets) const;  // recorded until ordered
  /** @brief After each forward (before its backward): gates from here until begin_forward() are
   * backward's recomputations; after the first, launch_order() becomes `sync`'s, once. */
  void end_forward(GradientSync& sync);

 private:
  void after_backward_of(std::size_t segment, std::uint64_t generation);
  std::vector<std::size_t> wanted(std::size_t a, std::size_t b) const;

  ShardedParams& shards_;
  std::vector<std::vector<std::size_t>> segments_;  ///< buckets per segment, this forward
  std::vector<std::vector<std::size_t>> planned_;   ///< the previous forward's
  std::vector<std::size_t> first_use_;              ///< buckets in order of first use, this forward
  bool ordered_ = false;                            ///< end_forward() has given the order
  bool in_forward_ = false;                         ///< between begin_forward() and end_forward()
  bool input_only_ = false;  ///< the first segment's backward reads no weight (token ids' layer)
  std::uint64_t generation_ = 0;
  bool prefetch_;
};

}  // namespace slimtrain::train
