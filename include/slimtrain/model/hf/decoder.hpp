#pragma once
/**
 * @brief The decoder classifier Qwen2 and Llama share (qwen2.hpp, llama.hpp each parse their own
 * config.json into DecoderConfig and register): token embeddings; layers of RMSNorm, grouped-query
 * causal self-attention with rotary positions, RMSNorm and a gated feed-forward (hidden_act of
 * the gate, times up, then down), each added to its input; a final RMSNorm; the score (no bias) on
 * the last token the attention mask marks, padding on either side, as
 * Qwen2ForSequenceClassification and LlamaForSequenceClassification. Names as the checkpoint's
 * (model.layers.N.self_attn.q_proj, ...). Inputs by name: input_ids and attention_mask. Hidden
 * states stay inside forward (the slim boundary).
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/decoder_body.hpp"
#include "slimtrain/model/hf/decoder_config.hpp"
#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

class DecoderForSequenceClassification final : public HfModel {
 public:
  explicit DecoderForSequenceClassification(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config_->hidden_size; }
  const HfConfig& config() const override { return *config_; }
  std::string base_prefix() const override { return "model."; }
  bool applies_lora() const override { return true; }
  std::vector<std::string> head_names() const override { return {"score.weight"}; }
  /** @brief Embeddings, each layer, the norm and the score gated (--shard parameters). */
  bool gates_weights() const override { return true; }
  bool recomputes_layers() const override { return true; }

 private:
  std::shared_ptr<const DecoderConfig> config_;
  std::unique_ptr<DecoderBody> model_;
  torch::nn::Linear score_{nullptr};
};

/** @brief An entry whose module is the decoder above, its config read by `parse`. */
HfArchitecture decoder_architecture(
    const std::string& model_type, const std::string& prefix,
    std::function<std::shared_ptr<const HfConfig>(const ConfigReader&)> parse);

}  // namespace slimtrain::model::hf
