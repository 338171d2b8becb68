#pragma once
/**
 * @brief A HuggingFace checkpoint's config.json, read for the architectures slimtrain builds
 * natively (--model hf:DIR). Free of LibTorch: the fields that shape the parameters and the
 * forward, each checked, with an error naming config.json and the key.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace slimtrain::model {

/** @brief The encoders of BertForSequenceClassification, its small variations, and ViT. */
struct HfConfig {
  /// "bert", "roberta" (xlm-roberta too: the same model), "distilbert", "vit", "qwen2", "llama"
  std::string model_type;
  std::int64_t vocab_size = 0, hidden_size = 0, num_hidden_layers = 0, num_attention_heads = 0;
  std::int64_t intermediate_size = 0, max_position_embeddings = 0, type_vocab_size = 0;
  std::int64_t pad_token_id = 0;
  std::string hidden_act;  ///< gelu (erf), gelu_new / gelu_pytorch_tanh, relu, silu
  double layer_norm_eps = 1e-12, initializer_range = 0.02;
  double hidden_dropout = 0.1, attention_dropout = 0.1, classifier_dropout = 0.1;
  std::int64_t num_labels = 2;  ///< the checkpoint's head (id2label's size when given)
  std::int64_t image_size = 0, patch_size = 0, num_channels = 0;  ///< vit only
  // qwen2 and llama only:
  std::int64_t num_key_value_heads = 0, head_dim = 0;
  double rms_norm_eps = 1e-6, rope_theta = 10000.0;
  /** @brief Rotary scaling: "default", "linear" (every frequency / factor) or "llama3" (Llama
   * 3.1's: long wavelengths / factor, short ones kept, a smooth blend between). */
  std::string rope_type = "default";
  double rope_factor = 1.0, rope_low_freq_factor = 1.0, rope_high_freq_factor = 4.0;
  std::int64_t rope_original_max_positions = 0;  ///< llama3: the context it was pretrained at
  bool attention_bias = false;                   ///< q, k and v biases (Qwen2's)
  bool frozen_positions = false;  ///< DistilBERT's sinusoidal_pos_embds: positions do not train

  bool is_vit() const { return model_type == "vit"; }
  /** @brief The decoders: Qwen2 and Llama. */
  bool is_decoder() const { return model_type == "qwen2" || model_type == "llama"; }

  /** @brief The parameters' prefix: "bert.", "roberta.", "distilbert.", "vit.", "model." */
  std::string base_prefix() const { return is_decoder() ? "model." : model_type + "."; }
  /** @brief RoBERTa counts positions from pad_token_id + 1: two rows of its table are unused. */
  std::int64_t position_offset() const { return model_type == "roberta" ? pad_token_id + 1 : 0; }
  /** @brief The longest sequence the position table holds. */
  std::int64_t max_length() const { return max_position_embeddings - position_offset(); }
  /** @brief "bert hidden 512 layers 4 heads 8": what messages and describe() say. */
  std::string describe() const;
};

/**
 * @brief The config from config.json's JSON `j` (`where` names the file in errors): ConfigError
 * naming the key for a missing or ill-typed field, a model_type or architecture slimtrain has no
 * native module for (naming the ones it has), or sizes that do not fit (hidden size not a
 * multiple of the heads).
 */
HfConfig parse_hf_config(const nlohmann::json& j, const std::string& where);

/**
 * @brief DIR/config.json read, checked by parse_hf_config and returned as canonical JSON (what
 * ModelSpec::hf_config holds); DataError naming the file when unreadable or not JSON.
 */
std::string load_hf_config(const std::string& dir);

}  // namespace slimtrain::model
