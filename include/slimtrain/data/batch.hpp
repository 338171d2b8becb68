#pragma once
/** @brief One batch as the model sees it. */
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace slimtrain::data {

/** @brief Tensors by input name, in the file's order (a ragged input's mask right after it). */
using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

/**
 * @brief Layout 1: x float32 [B, ...input_shape], normalised with the file's mean/std. Layout 2:
 * `inputs` instead (x undefined): fixed inputs as float32 (normalised when the input has mean/std)
 * or int64, ragged ones padded to the batch's longest (a multiple of 8) with their masks. y: int64
 * [B] either way.
 */
struct Batch {
  torch::Tensor x;
  torch::Tensor y;
  NamedTensors inputs;
  std::int64_t size() const { return y.defined() ? y.size(0) : 0; }
};

}  // namespace slimtrain::data
