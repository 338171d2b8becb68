#pragma once
/**
 * @brief ViTForImageClassification, written natively with HuggingFace's parameter names: a
 * convolution cuts the image into patches, a CLS token and learned positions join them, pre-norm
 * layers (layernorm_before, self-attention, layernorm_after, a GELU feed-forward, each added to
 * its input), a final layernorm, the classifier on the CLS token. Its input is a layout-1 file's
 * x, normalised by the file's mean and std, as pixel_values (prep images --preprocessor gives
 * the checkpoint's own normalisation).
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/model/hf_classifier.hpp"

namespace slimtrain::model {

class HfVitImpl final : public HfClassifierImpl {
 public:
  /** @brief ConfigError naming --model when the data's images are not the config's size. */
  explicit HfVitImpl(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config().hidden_size; }
  std::vector<std::string> head_names() const override {
    return {"classifier.weight", "classifier.bias"};
  }

 private:
  struct Layer {
    torch::nn::LayerNorm before{nullptr}, after{nullptr};
    torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, attention_out{nullptr};
    torch::nn::Linear intermediate{nullptr}, output{nullptr};
  };
  torch::Tensor encode(const torch::Tensor& x);
  torch::Tensor layer_forward(Layer& l, const torch::Tensor& x);

  torch::Tensor cls_token_, positions_;
  torch::nn::Conv2d patches_{nullptr};
  std::vector<Layer> layers_;
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};

}  // namespace slimtrain::model
