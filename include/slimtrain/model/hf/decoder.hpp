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

#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

/** @brief Rotary positions as config.json's rope_parameters / rope_scaling give them. */
struct RopeConfig {
  double rope_theta = 10000.0;
  /** @brief "default", "linear" (every frequency / factor) or "llama3" (Llama 3.1's: long
   * wavelengths / factor, short ones kept, a smooth blend between). */
  std::string rope_type = "default";
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 0;  ///< llama3: the pretrained context
};

struct DecoderConfig : HfConfig {
  std::int64_t vocab_size = 0, intermediate_size = 0, max_position_embeddings = 0;
  std::int64_t num_key_value_heads = 0, head_dim = 0;
  std::string hidden_act = "silu";
  double rms_norm_eps = 1e-6, attention_dropout = 0.0;
  RopeConfig rope;
  bool qkv_bias = false;  ///< biases on q_proj, k_proj, v_proj (Qwen2's; Llama's attention_bias)
  bool o_bias = false;    ///< a bias on o_proj (Llama's attention_bias)
  bool mlp_bias = false;  ///< biases on gate_proj, up_proj, down_proj (Llama's mlp_bias)

  std::int64_t max_tokens() const override { return max_position_embeddings; }

 protected:
  std::string describe_more() const override { return " vocab " + std::to_string(vocab_size); }
};

/** @brief What Qwen2's and Llama's config.json share; each adds its biases and refusals. */
std::shared_ptr<DecoderConfig> read_decoder_config(const ConfigReader& r);

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
  std::vector<std::string> head_names() const override { return {"score.weight"}; }

 private:
  struct Layer {
    torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
    torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
    torch::Tensor input_layernorm, post_attention_layernorm;  ///< RMSNorm weights
  };
  torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const;
  torch::Tensor layer_forward(Layer& l, const torch::Tensor& x, const torch::Tensor& cos,
                              const torch::Tensor& sin, const torch::Tensor& allowed);

  std::shared_ptr<const DecoderConfig> config_;
  torch::nn::Embedding embed_tokens_{nullptr};
  std::vector<Layer> layers_;
  torch::Tensor norm_;
  torch::nn::Linear score_{nullptr};
};

/** @brief An entry whose module is the decoder above, its config read by `parse`. */
HfArchitecture decoder_architecture(
    const std::string& model_type, const std::string& prefix,
    std::function<std::shared_ptr<const HfConfig>(const ConfigReader&)> parse);

}  // namespace slimtrain::model::hf
