#pragma once
/**
 * @brief Qwen2ForSequenceClassification and LlamaForSequenceClassification, written natively
 * with HuggingFace's parameter names: token embeddings; layers of RMSNorm, grouped-query causal
 * self-attention with rotary positions (q, k and v biases for Qwen2), RMSNorm and a SwiGLU
 * feed-forward, each added to its input; a final RMSNorm; the score (no bias) on the last token
 * that is not padding, which the attention mask marks, padding on either side. Inputs by name:
 * input_ids and attention_mask. Hidden states stay inside forward (the slim boundary).
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/model/hf_classifier.hpp"

namespace slimtrain::model {

class HfDecoderImpl final : public HfClassifierImpl {
 public:
  explicit HfDecoderImpl(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config().hidden_size; }
  std::vector<std::string> head_names() const override { return {"score.weight"}; }

 private:
  struct Layer {
    torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
    torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
    torch::Tensor input_norm, post_norm;  ///< RMSNorm weights
  };
  torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const;
  torch::Tensor layer_forward(Layer& l, const torch::Tensor& x, const torch::Tensor& cos,
                              const torch::Tensor& sin, const torch::Tensor& allowed);

  torch::nn::Embedding embed_tokens_{nullptr};
  std::vector<Layer> layers_;
  torch::Tensor norm_;
  torch::nn::Linear score_{nullptr};
};

}  // namespace slimtrain::model
