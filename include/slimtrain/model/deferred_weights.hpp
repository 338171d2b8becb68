#pragma once
/**
 * @brief Weights made without memory: while a DeferredWeights scope is open, the builders that
 * take part (the decoders' body: embeddings, each layer, the final norm) free each part's weights
 * as soon as it is made, keeping their shapes. Whoever opened the scope fills them later:
 * --shard parameters reads each rank's slices of a checkpoint into its shard, so that no rank
 * ever holds a 7B model whole. A weight without memory must not be read until it is filled.
 *
 * Within the scope the decoders' body draws no random initial values for its weights (the load
 * replaces them), and on every path it leaves the generator as it found it, so that what is made
 * after it (the head, the adapters) is the same with the scope and without.
 */
#include <torch/torch.h>

#include <vector>

namespace slimtrain::model {

class DeferredWeights {
 public:
  /** @brief Opens the scope on this thread; the freed weights are of `device`. */
  explicit DeferredWeights(torch::Device device);
  ~DeferredWeights();
  DeferredWeights(const DeferredWeights&) = delete;
  DeferredWeights& operator=(const DeferredWeights&) = delete;

 private:
  torch::Device device_;
  DeferredWeights* outer_;
  friend void defer_memory(const std::vector<torch::Tensor>& weights);
};

/** @brief Within a DeferredWeights scope, frees `weights`' memory (shapes kept, moved to the
 * scope's device); outside one, does nothing. */
void defer_memory(const std::vector<torch::Tensor>& weights);

/** @brief A tensor of `sizes` and `options` with no memory for its elements (nothing allocated,
 * on a GPU either): a stand-in that carries a shape and a dtype. */
torch::Tensor without_memory(torch::IntArrayRef sizes, const torch::TensorOptions& options);

/** @brief Whether a DeferredWeights scope is open on this thread. */
bool deferring();

/** @brief Whether `t`'s elements have memory (false for a weight defer_memory freed). */
bool has_memory(const torch::Tensor& t);

}  // namespace slimtrain::model
