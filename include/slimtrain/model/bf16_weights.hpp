#pragma once
/**
 * @brief Which weights stay float32 when a model's weights are held in bf16 (train --weights
 * bf16, eval --precision bf16): a BatchNorm's, whose running statistics are float32 buffers that
 * LibTorch's batch_norm will not mix with bf16 weights (it takes a bf16 input with float32
 * parameters, or everything in bf16).
 */
#include <torch/torch.h>

#include <vector>

namespace slimtrain::model {

/** @brief The parameters of `model`'s BatchNorm layers (1d, 2d, 3d). */
std::vector<torch::Tensor> float32_only_parameters(torch::nn::Module& model);

}  // namespace slimtrain::model
