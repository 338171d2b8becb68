#pragma once
/**
 * @brief Where a linear layer's parameter gradients may go instead of autograd's .grad (the
 * built-in mlp's layers, the hf decoders' projections).
 *
 * Autograd makes a weight's gradient whole (64 MiB for a 4096 x 4096 weight) and only then adds it
 * into .grad; a hook sees it after both exist. Such a layer instead offers its
 * gradients' ingredients (the output gradient and the input) to the sink the trainer set, which
 * can form them where they belong: added into a gradient bucket in place, or made a few rows at a
 * time and reduce-scattered as they are made (--shard gradients), so the whole never exists.
 */
#include <torch/torch.h>

namespace slimtrain::model {

class GradSink {
 public:
  virtual ~GradSink() = default;
  /**
   * @brief In backward of y = x W^T + b: `grad_out` [N, out] and `input` [N, in] (leading
   * dimensions flattened). True when the sink has taken both `weight`'s and `bias`'s gradients
   * (bias may be undefined): the layer then returns none for them. False leaves them to autograd.
   */
  virtual bool take_linear(const torch::Tensor& weight, const torch::Tensor& bias,
                           const torch::Tensor& grad_out, const torch::Tensor& input) = 0;
};

/**
 * @brief y = x W^T + b with `layer`'s weights; in backward the weight and bias gradients are
 * offered to `sink` first (when set), the input gradient always made here. Without a sink, with
 * gradients off, or under autocast (--precision bf16): the layer's own forward and backward.
 */
torch::Tensor linear(const torch::Tensor& x, const torch::nn::LinearImpl& layer, GradSink* sink);

}  // namespace slimtrain::model
