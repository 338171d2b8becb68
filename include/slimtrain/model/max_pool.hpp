#pragma once
/**
 * @brief 2x2 max pooling with stride 2 (odd sizes floored): torch::max_pool2d(x, 2) to the bit,
 * forward and backward, but with its own loop for contiguous (NCHW) float tensors on CPU.
 *
 * LibTorch 1.13's kernel for that layout is slow: measured here (Zen 3, 1 thread, slimtrain's heap
 * settings) 8.5-10 ms forward + 2 ms backward for cnn-small's first pooling of a batch of 64
 * ([64, 32, 28, 28]) and 4.4 ms for the second, a quarter of the model's 40 ms step, where the
 * first one's copy (clone) takes 0.2 ms. This loop takes 2.7 ms forward for the first. Channels-
 * last tensors, other types and devices go to torch::max_pool2d, which is fast for channels-last.
 *
 * Same rule as LibTorch's kernel, so results and checkpoints do not change: each window's
 * maximum is its first strictly greatest value in raster order, or its last NaN; the gradient
 * goes to that position alone.
 */
#include <torch/torch.h>

namespace slimtrain::model {

torch::Tensor max_pool_2x2(const torch::Tensor& x);

/// Whether max_pool_2x2 runs its own loop for @p x (else it calls torch::max_pool2d).
bool max_pool_2x2_own_loop(const torch::Tensor& x);

/// --max-pool: false sends every call to torch::max_pool2d, for comparisons with models that use
/// it; the process-wide default is true.
void use_own_max_pool_loop(bool on);

}  // namespace slimtrain::model
