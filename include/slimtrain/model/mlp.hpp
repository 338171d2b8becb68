#pragma once
/** @brief mlp: flatten, then Linear + ReLU per width, then a Linear head. Any input shape. */
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model {

class MlpImpl : public ClassifierImpl {
 public:
  explicit MlpImpl(const ModelSpec& spec);
  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  torch::Tensor embed(const torch::Tensor& x) override;
  bool gates_weights() const override { return true; }
  std::int64_t embedding_dim() const override { return embedding_dim_; }

 private:
  torch::nn::Sequential body_{nullptr};
  torch::nn::Linear head_{nullptr};
  std::int64_t in_features_ = 0;
  std::int64_t embedding_dim_ = 0;
};

}  // namespace slimtrain::model
