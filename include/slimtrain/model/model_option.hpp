#pragma once
/**
 * @brief The --model value, checked without LibTorch: the option table (and its fuzzer) and
 * ModelSpec share one rule.
 */
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::model {

/** @brief "torchscript:", the prefix of a user's own module: --model torchscript:PATH.pt */
inline constexpr const char* kScriptPrefix = "torchscript:";

/** @brief --cnn-layers' range: cnn-bn's own five, and up to three more at its smallest size. */
inline constexpr std::int64_t kCnnLayersMin = 5, kCnnLayersMax = 8;

/** @brief "hf:", the prefix of a HuggingFace checkpoint directory: --model hf:DIR */
inline constexpr const char* kHfModelPrefix = "hf:";

/**
 * @brief A --model value taken apart: a built-in name, "torchscript" and the module's path, or
 * "hf" and the checkpoint's directory.
 */
struct ModelChoice {
  std::string name;
  std::string script_path;  ///< torchscript only
  std::string hf_dir;       ///< hf only
};

/**
 * @brief mlp, cnn-small, cnn-bn, vit-tiny, text-bow, text-transformer, torchscript:PATH or
 * hf:DIR; ConfigError naming `option` otherwise.
 */
ModelChoice parse_model_option(const std::string& value, const std::string& option = "--model");

/** @brief The names make_model accepts, for --help. */
const std::vector<std::string>& model_names();

}  // namespace slimtrain::model
