#include "slimtrain/model/mlp.hpp"

#include <algorithm>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {

MlpImpl::MlpImpl(const ModelSpec& spec) : ClassifierImpl(spec) {
  in_features_ = 1;
  for (const auto d : spec.input_shape) in_features_ *= d;
  body_ = register_module("body", torch::nn::Sequential());
  std::int64_t width = in_features_;
  for (const auto next : spec.mlp_widths) {
    if (next <= 0) {
      SLIMTRAIN_THROW(ConfigError, "--mlp-widths: width ", next, " must be positive");
    }
    body_->push_back(torch::nn::Linear(width, next));
    body_->push_back(torch::nn::ReLU());
    width = next;
  }
  embedding_dim_ = width;
  head_ = register_module("head", torch::nn::Linear(width, spec.num_classes));
}

torch::Tensor MlpImpl::embed(const torch::Tensor& x) {
  if (x.dim() < 1 || x.numel() != x.size(0) * in_features_) {
    SLIMTRAIN_THROW(DataError, "model mlp expects ", in_features_, " values per sample, got ",
                    x.dim() < 1 ? 0 : x.numel() / std::max<std::int64_t>(1, x.size(0)));
  }
  auto h = x.reshape({x.size(0), in_features_});
  for (auto& layer : *body_) {
    await_weights(*layer.ptr(), h);
    const auto* dense = layer.ptr()->as<torch::nn::LinearImpl>();
    h = dense != nullptr ? linear(h, *dense) : layer.forward(h);
  }
  return h;
}

Output MlpImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  const torch::Tensor features = embed(x);
  await_weights(*head_, features);
  return make_output(linear(features, *head_), y);
}

}  // namespace slimtrain::model
