#pragma once
/** @brief Optimiser construction from options: SGD (momentum, Nesterov) and AdamW. */
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/train/optim_config.hpp"

namespace slimtrain::train {

/**
 * @brief Builds the optimiser over params. SGD's weight decay is L2 added to the gradient
 * (PyTorch's SGD); AdamW's is decoupled. ConfigError naming the option (--optimizer, --lr,
 * --momentum, --weight-decay, --beta1, --beta2, --eps, --nesterov) for a bad value.
 */
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimConfig& config,
                                                        std::vector<torch::Tensor> params);

/** @brief Bytes of the optimiser's state tensors (momentum; AdamW's two moments) on this rank. */
std::uint64_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer);

/** @brief Sets the learning rate of every parameter group (the schedule calls this each step). */
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

/**
 * @brief Scales the gradients so their global L2 norm is at most `max_norm` (as
 * torch::nn::utils::clip_grad_norm_, whose result it matches), computing on the gradients' device,
 * and returns that norm (before clipping) as a scalar tensor there: the host reads it only if it
 * asks (.item()), so clipping costs the GPU step no synchronisation. A NaN or infinite norm scales
 * by NaN, and the update is then skipped.
 */
torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace slimtrain::train
