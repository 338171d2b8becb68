#pragma once
/**
 * @brief A LibTorch optimizer's per-tensor state as optimizer state by element
 * (ckpt/optimizer_shards.hpp) and back: what makes checkpoints reshard between world sizes and
 * --shard modes.
 */
#include <torch/torch.h>

#include <vector>

#include "slimtrain/ckpt/optimizer_shards.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace slimtrain::train {

/** @brief The state `optimizer` ("sgd" or "adamw") holds for `spans`, by element. */
ckpt::FlatOptimizerState flat_state(const torch::optim::Optimizer& optimizer,
                                    const std::string& name,
                                    const std::vector<OptimizedSpan>& spans);

/** @brief An empty state over `spans`' ranges, to fill from checkpoint files. */
ckpt::FlatOptimizerState empty_state(const std::vector<OptimizedSpan>& spans);

/**
 * @brief Sets `optimizer`'s state for `spans` from `state` (made by empty_state over the same
 * spans, then filled). DataError when it was written by another optimizer.
 */
void load_flat_state(torch::optim::Optimizer& optimizer, const std::string& name,
                     const std::vector<OptimizedSpan>& spans,
                     const ckpt::FlatOptimizerState& state);

}  // namespace slimtrain::train
