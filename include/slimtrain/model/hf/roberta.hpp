#pragma once
/**
 * @brief RoBERTa (model_type "roberta"; "xlm-roberta" and "camembert" are the same model under
 * their own names): RobertaForSequenceClassification with the checkpoint's names. BERT's
 * embeddings and encoder (bert.hpp) under "roberta.", with positions counted from
 * pad_token_id + 1 over the tokens that are not padding; no pooler; a head of dense, tanh and
 * out_proj on the first token.
 */
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/bert.hpp"

namespace slimtrain::model::hf {

class RobertaForSequenceClassification final : public HfModel {
 public:
  bool recomputes_layers() const override { return true; }
  explicit RobertaForSequenceClassification(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  std::vector<std::string> optional_input_names() const override;
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config_->hidden_size; }
  const HfConfig& config() const override { return *config_; }
  std::string base_prefix() const override { return "roberta."; }
  bool applies_lora() const override { return true; }
  std::vector<std::string> head_names() const override {
    return {"classifier.dense.weight", "classifier.dense.bias", "classifier.out_proj.weight",
            "classifier.out_proj.bias"};
  }

 private:
  std::shared_ptr<const BertConfig> config_;
  std::unique_ptr<BertBody> roberta_;
  torch::nn::Linear classifier_dense_{nullptr}, classifier_out_proj_{nullptr};
};

HfArchitecture roberta_architecture();
/** @brief RoBERTa under another model_type, exported as `export_name`, reading `prefix`*. */
HfArchitecture roberta_alias(const std::string& model_type, const std::string& export_name,
                             const std::string& prefix);

}  // namespace slimtrain::model::hf
