#pragma once
/**
 * @brief The kinds of model --model names, in one table: the built-in models, a TorchScript
 * module (torchscript:PATH) and a HuggingFace checkpoint (hf:DIR; its architectures are
 * hf/registry.hpp's). Each kind says what it takes from a data file, what it adds to a spec's
 * description and which of the spec's fields shape its parameters (the checkpoint fingerprint).
 * Free of LibTorch: the option parser and its fuzzer use it; the builders are classifier.cpp's.
 */
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::model {

struct ModelSpec;

/** @brief What a kind of model takes from the data file. */
enum class Takes {
  x,       ///< a layout-1 file's one input x: images or feature vectors
  tokens,  ///< input_ids and attention_mask of a layout-2 file (prep text)
  named,   ///< the inputs its forward names (a TorchScript module's arguments)
  config,  ///< what its config.json's architecture reads (hf:DIR)
};

struct ModelKind {
  std::string name;  ///< "mlp", "cnn-small", ..., "torchscript", "hf"
  Takes takes = Takes::x;
  bool built_in = true;  ///< named by itself on --model (not torchscript:PATH or hf:DIR)
  /** @brief The kind's fields in ModelSpec::describe(): " widths [256,128]". */
  void (*describe)(const ModelSpec& spec, std::ostream& out) = nullptr;
  /** @brief The fields that shape its parameters, added to the fingerprint's JSON. */
  void (*shape_fields)(const ModelSpec& spec, nlohmann::json& arch) = nullptr;
};

/** @brief Every kind, in the order --help lists them. */
const std::vector<ModelKind>& model_kinds();
/** @brief The kind `name` names; ConfigError naming --model and the kinds there are. */
const ModelKind& model_kind(const std::string& name);
/** @brief The kind `name` names, or null. */
const ModelKind* find_model_kind(const std::string& name);

}  // namespace slimtrain::model
