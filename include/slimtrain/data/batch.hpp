#pragma once
/** @brief One batch as the model sees it. */
#include <torch/torch.h>

namespace slimtrain::data {

/** @brief x: float32 [B, ...input_shape], normalised with the file's mean/std; y: int64 [B]. */
struct Batch {
  torch::Tensor x;
  torch::Tensor y;
};

}  // namespace slimtrain::data
