#pragma once
/**
 * @brief --activation-checkpointing layers: a layer's activations dropped after forward and made
 * again in backward, so a step holds each layer's input instead of everything inside it.
 *
 * recompute_in_backward(layer, x) runs layer(x) without autograd and keeps only x, the random
 * generators' states (the CPU's, and the CUDA device's of x) and the autocast state. Backward runs
 * the layer again from x with those states, so dropout draws the same masks and the recomputation
 * equals the forward, then backpropagates through it: the layer's weights receive their gradients
 * there (hooks included, as without recomputing) and x its gradient. The generators are put back
 * afterwards, so nothing after the layer sees a different stream. Other inputs the layer reads (a
 * mask, rotary tables) are captured by `layer` and must not need gradients.
 */
#include <torch/torch.h>

#include <functional>
#include <utility>

namespace slimtrain::model {

using LayerFunction = std::function<torch::Tensor(const torch::Tensor& x)>;

/** @brief layer(x), its activations recomputed in backward (see above); also when x needs no
 * gradient (a frozen embedding's output), as the layer's weights may. Where autograd is off
 * (evaluation), simply layer(x). */
torch::Tensor recompute_in_backward(LayerFunction layer, const torch::Tensor& x);

/** @brief layer(x), through recompute_in_backward when `recompute` (--activation-checkpointing
 * layers): the one choice every model's layer loop makes. */
inline torch::Tensor run_layer(LayerFunction layer, const torch::Tensor& x, bool recompute) {
  return recompute ? recompute_in_backward(std::move(layer), x) : layer(x);
}

}  // namespace slimtrain::model
