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

/** @brief A --model value taken apart: a built-in name, or "torchscript" and the module's path. */
struct ModelChoice {
  std::string name;
  std::string script_path;  ///< empty for built-in models
};

/**
 * @brief mlp, cnn-small, cnn-bn, vit-tiny or torchscript:PATH; ConfigError naming `option`
 * otherwise.
 */
ModelChoice parse_model_option(const std::string& value, const std::string& option = "--model");

/** @brief The names make_model accepts, for --help. */
const std::vector<std::string>& model_names();

}  // namespace slimtrain::model
