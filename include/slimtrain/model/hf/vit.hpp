#pragma once
/**
 * @brief ViT (model_type "vit"): ViTForImageClassification with the checkpoint's names. A
 * convolution cuts the image into patches, a CLS token and learned positions join them, pre-norm
 * layers (layernorm_before, self-attention, layernorm_after, a feed-forward, each added to its
 * input), a final layernorm, the classifier on the CLS token. Its input is a layout-1 file's x,
 * normalised by the file's mean and std, as pixel_values (prep images --preprocessor gives the
 * checkpoint's own normalisation).
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

/** @brief ViTConfig's fields by their config.json names. */
struct ViTConfig : HfConfig {
  std::int64_t intermediate_size = 0, image_size = 0, patch_size = 0, num_channels = 3;
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0, attention_probs_dropout_prob = 0, layer_norm_eps = 1e-12;
  std::int64_t ffn_width() const override { return intermediate_size; }
  std::int64_t image_tokens() const override {
    return (image_size / patch_size) * (image_size / patch_size) + 1;  // the patches and [CLS]
  }

 protected:
  std::string describe_more() const override;
};

class ViTForImageClassification final : public HfModel {
 public:
  bool recomputes_layers() const override { return true; }
  /** @brief ConfigError naming --model when the data's images are not the config's size. */
  explicit ViTForImageClassification(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config_->hidden_size; }
  const HfConfig& config() const override { return *config_; }
  std::string base_prefix() const override { return "vit."; }
  std::vector<std::string> head_names() const override {
    return {"classifier.weight", "classifier.bias"};
  }
  bool applies_lora() const override { return true; }
  std::string peft_adapter_refusal() const override;

 private:
  struct Layer {
    torch::nn::LayerNorm layernorm_before{nullptr}, layernorm_after{nullptr};
    torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, attention_out{nullptr};
    torch::nn::Linear intermediate{nullptr}, output{nullptr};
  };
  torch::Tensor encode(const torch::Tensor& x);
  torch::Tensor layer_forward(Layer& l, const torch::Tensor& x);

  std::shared_ptr<const ViTConfig> config_;
  torch::Tensor cls_token_, position_embeddings_;
  torch::nn::Conv2d projection_{nullptr};  ///< embeddings.patch_embeddings.projection
  std::vector<Layer> layer_;
  torch::nn::LayerNorm layernorm_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};

HfArchitecture vit_architecture();

}  // namespace slimtrain::model::hf
