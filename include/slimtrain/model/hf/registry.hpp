#pragma once
/**
 * @brief The HuggingFace architectures slimtrain builds natively (--model hf:DIR), one entry each:
 * nothing else in the tree names a model_type. An entry says how its config.json is parsed (into
 * its own config struct), how its module is built, what it reads, and the name `export --hf`
 * writes. Adding an architecture is its own file and one line in registry.cpp
 * (src/model/hf/README.md walks through it).
 */
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/config.hpp"
#include "slimtrain/model/hf/config_reader.hpp"

namespace slimtrain::model {
struct ModelSpec;
class ClassifierImpl;
}  // namespace slimtrain::model

namespace slimtrain::model::hf {

/** @brief What a model takes from the data file. */
enum class Reads {
  tokens,  ///< input_ids and attention_mask of a layout-2 file (prep text)
  images,  ///< a layout-1 file's x as pixel_values (prep images)
};

struct HfArchitecture {
  std::string model_type;  ///< config.json's model_type
  std::string
      export_name;  ///< config.json's architectures in an export: "BertForSequenceClassification"
  /** @brief Prefixes of the `architectures` names whose checkpoints it reads (any head). */
  std::vector<std::string> reads_architectures;
  Reads reads = Reads::tokens;
  /** @brief The config struct from config.json (the reader names the file in errors). */
  std::function<std::shared_ptr<const HfConfig>(const ConfigReader&)> parse;
  /** @brief The module, its weights initialised as transformers initialises a new model. */
  std::function<std::shared_ptr<ClassifierImpl>(const ModelSpec&)> build;
  /** @brief Whether its module gates its layers' weights (ClassifierImpl::gates_weights): with
   * --shard parameters they are gathered layer by layer, else whole. */
  bool gates_layers = false;
};

/** @brief Every architecture, in the order messages list them. */
const std::vector<HfArchitecture>& architectures();
/** @brief The entry for `model_type`; ConfigError naming `where` and the ones there are. */
const HfArchitecture& architecture(const std::string& model_type, const std::string& where);
/** @brief "bert, roberta, ... and llama". */
std::string model_type_list();

/** @brief The parsed config of an hf spec (ModelSpec::hf), parsed from its kept text on first
 * use; ConfigError when it has neither. */
const HfConfig& config_of(const ModelSpec& spec);
/** @brief The module spec's config names: the registry's build. */
std::shared_ptr<ClassifierImpl> build_model(const ModelSpec& spec);

}  // namespace slimtrain::model::hf
