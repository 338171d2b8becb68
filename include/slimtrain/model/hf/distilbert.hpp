#pragma once
/**
 * @brief DistilBERT (model_type "distilbert"): DistilBertForSequenceClassification with its own
 * config names (dim, n_layers, n_heads, hidden_dim, activation, ...) and tensor names
 * (distilbert.transformer.layer.N.attention.q_lin, sa_layer_norm, ffn.lin1, ...): word and
 * position embeddings (no token types; sinusoidal ones do not train), BERT's post-norm layers
 * (post_norm_layer.hpp), and pre_classifier with a ReLU before the classifier.
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/hf/post_norm_layer.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

/** @brief DistilBertConfig's fields by their config.json names (the base's under BERT's). */
struct DistilBertConfig : HfConfig {
  std::int64_t vocab_size = 0, hidden_dim = 0, max_position_embeddings = 512, pad_token_id = 0;
  std::string activation = "gelu";
  double dropout = 0.1, attention_dropout = 0.1, seq_classif_dropout = 0.2;
  bool sinusoidal_pos_embds = false;

  std::int64_t max_tokens() const override { return max_position_embeddings; }
  std::int64_t ffn_width() const override { return hidden_dim; }

 protected:
  std::string describe_more() const override { return " vocab " + std::to_string(vocab_size); }
};

class DistilBertForSequenceClassification final : public HfModel {
 public:
  bool recomputes_layers() const override { return true; }
  explicit DistilBertForSequenceClassification(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config_->hidden_size; }
  const HfConfig& config() const override { return *config_; }
  std::string base_prefix() const override { return "distilbert."; }
  bool applies_lora() const override { return true; }
  std::vector<std::string> head_names() const override {
    return {"pre_classifier.weight", "pre_classifier.bias", "classifier.weight", "classifier.bias"};
  }

 private:
  std::shared_ptr<const DistilBertConfig> config_;
  torch::nn::Embedding word_embeddings_{nullptr}, position_embeddings_{nullptr};
  torch::nn::LayerNorm embeddings_norm_{nullptr};  ///< embeddings.LayerNorm
  std::vector<PostNormLayer> layer_;               ///< transformer.layer.N
  torch::nn::Linear pre_classifier_{nullptr}, classifier_{nullptr};
};

HfArchitecture distilbert_architecture();

}  // namespace slimtrain::model::hf
