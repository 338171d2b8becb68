#pragma once
/**
 * @brief BERT (model_type "bert"): BertForSequenceClassification, with the checkpoint's names.
 * Word, position and token-type embeddings summed and normalised; post-norm layers
 * (post_norm_layer.hpp); the pooler (tanh of a dense layer on the first token); dropout; the
 * classifier. Inputs by name: input_ids, attention_mask, and token_type_ids when the file has
 * them (a pair's segments; all 0 without). RoBERTa reuses the embeddings and the encoder
 * (roberta.hpp). Hidden states stay inside forward (the slim boundary).
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/hf/post_norm_layer.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

/** @brief BertConfig's fields (RoBERTa's too), by their config.json names. */
struct BertConfig : HfConfig {
  std::int64_t vocab_size = 0, intermediate_size = 0, max_position_embeddings = 0;
  std::int64_t type_vocab_size = 0, pad_token_id = 0;
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0.1, attention_probs_dropout_prob = 0.1;
  double classifier_dropout = 0.1;  ///< hidden_dropout_prob when config.json has none
  double layer_norm_eps = 1e-12;
  /** @brief RoBERTa counts positions from pad_token_id + 1: that many rows are never used. */
  std::int64_t position_offset = 0;

  std::int64_t max_tokens() const override { return max_position_embeddings - position_offset; }
  std::int64_t ffn_width() const override { return intermediate_size; }
  PostNormLayer::Settings layer_settings() const {
    return {num_attention_heads, hidden_act, hidden_dropout_prob, attention_probs_dropout_prob};
  }

 protected:
  std::string describe_more() const override { return " vocab " + std::to_string(vocab_size); }
};

/** @brief BertConfig from config.json; `roberta_positions` counts positions as RoBERTa. */
std::shared_ptr<BertConfig> read_bert_config(const ConfigReader& r, bool roberta_positions);

/** @brief The embeddings and the encoder, under `base` (the "bert." or "roberta." group). */
class BertBody {
 public:
  BertBody(torch::nn::Module& base, std::shared_ptr<const BertConfig> config);
  /** @brief The hidden states [B, T, H] of a batch; with `recompute` each layer's activations are
   * made again in backward (recompute.hpp). */
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask,
                        const torch::Tensor& token_types, bool training, bool recompute = false);
  bool has_token_types() const { return config_->type_vocab_size >= 2; }

 private:
  std::shared_ptr<const BertConfig> config_;
  torch::nn::Embedding word_embeddings_{nullptr}, position_embeddings_{nullptr},
      token_type_embeddings_{nullptr};
  torch::nn::LayerNorm embeddings_norm_{nullptr};  ///< embeddings.LayerNorm
  std::vector<PostNormLayer> layer_;               ///< encoder.layer.N
};

class BertForSequenceClassification final : public HfModel {
 public:
  bool recomputes_layers() const override { return true; }
  explicit BertForSequenceClassification(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  std::vector<std::string> optional_input_names() const override;
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config_->hidden_size; }
  const HfConfig& config() const override { return *config_; }
  std::string base_prefix() const override { return "bert."; }
  bool applies_lora() const override { return true; }
  std::vector<std::string> head_names() const override {
    return {"classifier.weight", "classifier.bias"};
  }
  std::string optional_prefix() const override { return "bert.pooler."; }

 private:
  std::shared_ptr<const BertConfig> config_;
  std::unique_ptr<BertBody> bert_;
  torch::nn::Linear pooler_dense_{nullptr};  ///< bert.pooler.dense
  torch::nn::Linear classifier_{nullptr};
};

HfArchitecture bert_architecture();

}  // namespace slimtrain::model::hf
