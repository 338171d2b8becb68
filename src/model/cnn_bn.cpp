#include "slimtrain/model/cnn_bn.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/max_pool.hpp"
#include "slimtrain/model/model_option.hpp"

namespace slimtrain::model {

CnnBnImpl::CnnBnImpl(const ModelSpec& spec) : ClassifierImpl(spec) {
  const std::int64_t c = pooled_image_shape(spec)[0];  // global pooling: any H, W >= 4
  namespace nn = torch::nn;
  const std::int64_t w = spec.cnn_width;
  if (spec.cnn_layers < kCnnLayersMin || spec.cnn_layers > kCnnLayersMax) {  // a checkpoint's spec
    SLIMTRAIN_THROW(ConfigError, "--cnn-layers: ", spec.cnn_layers, " must be ", kCnnLayersMin,
                    " to ", kCnnLayersMax);
  }
  std::int64_t in = c;
  for (std::int64_t k = 0; k < spec.cnn_layers; ++k) {
    const std::string n = std::to_string(k + 1);
    const std::int64_t width = k < 2 ? w : k < 4 ? 2 * w : 4 * w;
    // No conv bias: the BatchNorm right after it has its own shift.
    convs_.push_back(register_module(
        "conv" + n, nn::Conv2d(nn::Conv2dOptions(in, width, 3).padding(1).bias(false))));
    norms_.push_back(register_module("bn" + n, nn::BatchNorm2d(width)));
    in = width;
  }
  head_ = register_module("head", nn::Linear(in, spec.num_classes));
}

torch::Tensor CnnBnImpl::block(std::size_t k, const torch::Tensor& x) {
  await_weights(*convs_[k], x);
  await_weights(*norms_[k]);
  return torch::relu(norms_[k]->forward(convs_[k]->forward(x)));
}

torch::Tensor CnnBnImpl::embed(const torch::Tensor& x) {
  auto h = max_pool_2x2(block(1, block(0, as_images(x))));
  h = max_pool_2x2(block(3, block(2, h)));
  for (std::size_t k = 4; k < convs_.size(); ++k) h = block(k, h);
  return h.mean({2, 3});  // global average pooling: [B, 4W]
}

Output CnnBnImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  const torch::Tensor features = embed(x);
  await_weights(*head_, features);
  return make_output(head_->forward(features), y);
}

}  // namespace slimtrain::model
