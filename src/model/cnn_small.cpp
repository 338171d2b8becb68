#include "slimtrain/model/cnn_small.hpp"

#include "slimtrain/model/max_pool.hpp"

namespace slimtrain::model {

CnnSmallImpl::CnnSmallImpl(const ModelSpec& spec) : ClassifierImpl(spec) {
  const auto [c, h, w] = pooled_image_shape(spec);
  namespace nn = torch::nn;
  conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(c, 32, 3).padding(1)));
  conv2_ = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)));
  // Each 2x2 max-pool floors odd sizes, as PyTorch's does, so the peer gets the same shapes.
  fc1_ = register_module("fc1", nn::Linear(64 * (h / 4) * (w / 4), 128));
  fc2_ = register_module("fc2", nn::Linear(128, spec.num_classes));
}

torch::Tensor CnnSmallImpl::embed(const torch::Tensor& x) {
  await_weights(*conv1_);
  auto h = max_pool_2x2(torch::relu(conv1_->forward(as_images(x))));
  await_weights(*conv2_, h);
  h = max_pool_2x2(torch::relu(conv2_->forward(h)));
  await_weights(*fc1_, h);
  return torch::relu(fc1_->forward(h.flatten(1)));
}

Output CnnSmallImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  const torch::Tensor features = embed(x);
  await_weights(*fc2_, features);
  return make_output(fc2_->forward(features), y);
}

}  // namespace slimtrain::model
