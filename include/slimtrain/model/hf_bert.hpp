#pragma once
/**
 * @brief BertForSequenceClassification (and RoBERTa's), written natively with HuggingFace's
 * parameter names, so a checkpoint loads name to tensor (eval/pretrained_weights.hpp).
 *
 * BERT: word, position and token-type embeddings summed and normalised; post-norm layers
 * (self-attention, then a GELU feed-forward, each added to its input and normalised); the pooler
 * (tanh of a dense layer on the first token); dropout; the classifier. RoBERTa: positions counted
 * from pad_token_id + 1 over the tokens that are not padding, and a head of dense, tanh and
 * out_proj on the first token instead of the pooler. DistilBERT: no token types, its own names
 * (transformer.layer.N.attention.q_lin, sa_layer_norm, ffn.lin1, ...), and pre_classifier with a
 * ReLU before the classifier. Inputs by name: input_ids and attention_mask, and token_type_ids
 * when the file has them (a pair's segments; all 0 without). Hidden states stay inside forward
 * (the slim boundary).
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/model/hf_classifier.hpp"

namespace slimtrain::model {

class HfBertImpl final : public HfClassifierImpl {
 public:
  /** @brief Built from spec.hf_config, initialised as transformers initialises a new model. */
  explicit HfBertImpl(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return inputs_; }
  /** @brief token_type_ids (prep text writes them for pairs) where the model has token types. */
  std::vector<std::string> optional_input_names() const override;
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config().hidden_size; }
  std::vector<std::string> head_names() const override;
  std::string optional_prefix() const override {
    return config().model_type == "bert" ? config().base_prefix() + "pooler." : "";
  }

 private:
  struct Layer {
    torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, attention_out{nullptr};
    torch::nn::LayerNorm attention_norm{nullptr};
    torch::nn::Linear intermediate{nullptr}, output{nullptr};
    torch::nn::LayerNorm output_norm{nullptr};
  };
  torch::Tensor encode(const torch::Tensor& ids, const torch::Tensor& mask,
                       const torch::Tensor& token_types);
  torch::Tensor layer_forward(Layer& l, const torch::Tensor& x, const torch::Tensor& padding);

  std::vector<std::string> inputs_;
  torch::nn::Embedding words_{nullptr}, positions_{nullptr}, token_types_{nullptr};
  torch::nn::LayerNorm embedding_norm_{nullptr};
  std::vector<Layer> layers_;
  torch::nn::Linear pooler_{
      nullptr};  ///< BERT's pooler; RoBERTa's classifier.dense; pre_classifier
  torch::nn::Linear classifier_{nullptr};  ///< BERT's classifier; RoBERTa's classifier.out_proj
};

}  // namespace slimtrain::model
