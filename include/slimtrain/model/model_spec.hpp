#pragma once
/**
 * @brief What a model is: its name, the shapes it sees and its settings, saved with every
 * checkpoint (as JSON) and fingerprinted, so a checkpoint is loaded only into the model it was
 * written from; and the size text messages about models use. Free of LibTorch: the option
 * parser (and its fuzz target) fills one.
 */
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "slimtrain/model/model_kind.hpp"
#include "slimtrain/model/model_option.hpp"

namespace slimtrain::model {

namespace hf {
struct HfConfig;
}

/** @brief Which model to build and the shapes it sees; saved with every checkpoint. */
struct ModelSpec {
  std::string name = "cnn-small";  ///< mlp | cnn-small | cnn-bn | vit-tiny | text-bow |
                                   ///< text-transformer | torchscript | hf
  /// Sample shape from the data file: {C,H,W} or {H,W} (one channel) for images, {D} for features.
  std::vector<std::int64_t> input_shape;
  std::int64_t num_classes = 10;
  std::vector<std::int64_t> mlp_widths{256, 128};
  std::int64_t vit_patch = 7, vit_dim = 64, vit_depth = 2, vit_heads = 4;
  std::int64_t cnn_width = 16;  ///< cnn-bn: channels W, W, 2W, 2W, 4W
  std::int64_t cnn_layers = 5;  ///< cnn-bn: conv layers; those past 5 are 4W -> 4W at 1/4 size
  double label_smoothing = 0.0;
  // text-bow and text-transformer (named inputs input_ids, attention_mask):
  std::int64_t vocab_size = 0;    ///< from the file's input_ids (its vocab_size attribute)
  std::int64_t text_dim = 64;     ///< embedding (and encoder) width
  std::int64_t text_bigrams = 0;  ///< text-bow: hashed bigram buckets (0: unigrams only)
  std::int64_t text_depth = 2, text_heads = 4;  ///< text-transformer's encoder
  // torchscript only:
  std::string script_path;       ///< the module file (--model torchscript:PATH)
  std::string script_signature;  ///< its parameters' and buffers' names, shapes, dtypes
  std::string logits_output;     ///< which output is the logits: index or key ("": default)
  bool model_loss = false;       ///< train on the module's own loss instead of slimtrain's
  bool jit_optimize = false;     ///< LibTorch's graph executor optimisations (off: as eager)
  // hf only (--model hf:DIR):
  std::string hf_dir;     ///< where the checkpoint was read from (weights come from there once)
  std::string hf_config;  ///< its config.json, canonical JSON: checkpoints need no DIR after
  std::string lora;       ///< --lora's canonical text (lora.hpp), "" for none: adapters built in
  std::vector<std::string> lora_train;  ///< --lora-train: modules trained in full beside them
  /**
   * @brief hf_config parsed by its architecture (hf/config.hpp), once: set where the config is
   * read (eval/model_for_data.hpp), or from the kept text on first use (hf::config_of). Not
   * saved: hf_config is what a checkpoint keeps.
   */
  mutable std::shared_ptr<const hf::HfConfig> hf;

  /**
   * @brief Sets name (and script_path) from a --model value: mlp, cnn-small, cnn-bn, vit-tiny or
   * torchscript:PATH; ConfigError naming `option` otherwise.
   */
  void set_model(const std::string& value, const std::string& option = "--model");
  /** @brief What kind of model name names (model_kind.hpp). */
  const ModelKind& kind() const { return model_kind(name); }
  /** @brief "cnn-small", "torchscript:PATH" or "hf:DIR": the --model value that builds this. */
  std::string model_option() const;
  /** @brief One line, e.g. "cnn-small input [1,28,28] classes 10". */
  std::string describe() const;
  nlohmann::json to_json() const;
  /** @brief Inverse of to_json(); missing keys keep their defaults, wrong types throw ConfigError.
   */
  static ModelSpec from_json(const nlohmann::json& j);
  /**
   * @brief Stable 16-digit hex hash of what determines the parameter shapes (name, input shape,
   * classes and the fields of that model). Training-only settings such as label smoothing are
   * left out, so a checkpoint can be evaluated with a different smoothing.
   */
  std::string fingerprint() const;
};

/** @brief "[1,28,28]" */
std::string shape_text(const std::vector<std::int64_t>& sizes);

/** @brief "1.0 MiB", "816 B": sizes in messages people read. */
std::string format_bytes(std::uint64_t bytes);

}  // namespace slimtrain::model
