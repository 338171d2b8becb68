#pragma once
/**
 * @brief A HuggingFace checkpoint's config.json as the architecture its model_type names parses
 * it (registry.hpp): parsed once per model, into that architecture's own config struct, whose
 * base (HfConfig) holds what every part outside the architecture asks of it. Free of LibTorch.
 */
#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace slimtrain::model::hf {

struct HfArchitecture;

/** @brief What every architecture's config has, under whatever names its config.json uses. */
struct HfConfig {
  virtual ~HfConfig() = default;
  std::string model_type;  ///< as config.json names it ("xlm-roberta" stays itself)
  std::int64_t hidden_size = 0, num_hidden_layers = 0, num_attention_heads = 0;
  std::int64_t num_labels = 2;  ///< the checkpoint's head: id2label's size when given
  double initializer_range = 0.02;

  /** @brief The registry's entry for model_type. */
  const HfArchitecture& architecture() const;
  /** @brief The longest token sequence the model takes; 0 for image models. */
  virtual std::int64_t max_tokens() const { return 0; }
  /** @brief Each layer's feed-forward width, and whether it is gated (SwiGLU: gate and up
   * projections): what the memory plan's activation estimate needs (train/memory_plan.hpp). */
  virtual std::int64_t ffn_width() const { return 4 * hidden_size; }
  virtual bool gated_ffn() const { return false; }
  /** @brief The tokens an image model makes of every sample; 0 for text (the data says). */
  virtual std::int64_t image_tokens() const { return 0; }
  /** @brief "bert hidden 512 layers 4 heads 8 vocab 30522": what messages say. */
  std::string describe() const;

 protected:
  /** @brief What describe() adds: " vocab 30522", " image 3x224x224 patch 16". */
  virtual std::string describe_more() const { return ""; }
};

class ConfigReader;

/**
 * @brief The base's fields under transformers' common names: model_type, hidden_size,
 * num_hidden_layers and num_attention_heads (sizes that must be there), initializer_range and the
 * labels; ConfigError when the hidden size does not split into the heads (unless `head_dim`
 * says each head's width).
 */
void read_base(const ConfigReader& r, HfConfig& c);

/** @brief DIR/config.json as read: its text (what a checkpoint keeps) and its parsed config. */
struct ReadConfig {
  std::string text;  ///< canonical JSON
  std::shared_ptr<const HfConfig> config;
};

/**
 * @brief Parses `j` through the architecture its model_type names (`where` names the file in
 * errors): ConfigError naming the key for a missing or ill-typed field, a model_type or
 * architecture slimtrain has no native module for (naming the ones it has), a field that changes
 * the computation and is not implemented, or sizes that do not fit.
 */
std::shared_ptr<const HfConfig> parse_config(const nlohmann::json& j, const std::string& where);
/** @brief parse_config of a checkpoint's kept text; ConfigError naming `where` if not JSON. */
std::shared_ptr<const HfConfig> parse_config_text(const std::string& text,
                                                  const std::string& where);
/** @brief DIR/config.json read and parsed; DataError naming the file when unreadable or not JSON.
 */
ReadConfig read_config(const std::string& dir);

/**
 * @brief The tokens a sample of the model config.json `j` describes may hold: the architecture's
 * own rule where the registry has one (RoBERTa's positions less its offset), else config.json's
 * max_position_embeddings; 0 when neither says. For `prep text`'s default --max-length.
 */
std::int64_t token_limit(const nlohmann::json& j);

/** @brief How many config.json files read_config has read, and configs parsed (for tests). */
struct ConfigCounts {
  std::atomic<std::int64_t> files{0}, parses{0};
};
ConfigCounts& config_counts();

}  // namespace slimtrain::model::hf
