#pragma once
/**
 * @brief cnn-small, the reference architecture the DDP peer also builds: conv3x3 C->32 + ReLU +
 * maxpool2, conv3x3 32->64 + ReLU + maxpool2, fc 64*(H/4)*(W/4) -> 128 + ReLU, fc 128 -> classes.
 */
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model {

class CnnSmallImpl : public ClassifierImpl {
 public:
  explicit CnnSmallImpl(const ModelSpec& spec);
  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  torch::Tensor embed(const torch::Tensor& x) override;
  bool gates_weights() const override { return true; }
  std::int64_t embedding_dim() const override { return 128; }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};

}  // namespace slimtrain::model
