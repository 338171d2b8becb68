#pragma once
/**
 * @brief The decoder's config (decoder.hpp): what Qwen2's and Llama's config.json share, by
 * their names, the rotary positions among it; each architecture's file adds its biases and
 * refusals. Free of LibTorch.
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/config.hpp"
#include "slimtrain/model/hf/config_reader.hpp"

namespace slimtrain::model::hf {

/** @brief Rotary positions as config.json's rope_parameters / rope_scaling give them. */
struct RopeConfig {
  double rope_theta = 10000.0;
  /** @brief "default", "linear" (every frequency / factor) or "llama3" (Llama 3.1's: long
   * wavelengths / factor, short ones kept, a smooth blend between). */
  std::string rope_type = "default";
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 0;  ///< llama3: the pretrained context
  /** @brief Multimodal rotary positions (Qwen2-VL's M-RoPE): how many frequencies each of the
   * temporal, height and width positions turns, in that order; empty for text positions. */
  std::vector<std::int64_t> mrope_section;
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
  std::int64_t ffn_width() const override { return intermediate_size; }
  bool gated_ffn() const override { return true; }

 protected:
  std::string describe_more() const override { return " vocab " + std::to_string(vocab_size); }
};

/** @brief What Qwen2's and Llama's config.json share; each adds its biases and refusals. */
std::shared_ptr<DecoderConfig> read_decoder_config(const ConfigReader& r);

}  // namespace slimtrain::model::hf
