// The one list of HuggingFace architectures (registry.hpp). A new one: its own file under
// src/model/hf/ with a function returning its entry, and one line below (README.md here).
#include "slimtrain/model/hf/registry.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/hf/bert.hpp"
#include "slimtrain/model/hf/distilbert.hpp"
#include "slimtrain/model/hf/llama.hpp"
#include "slimtrain/model/hf/qwen2.hpp"
#include "slimtrain/model/hf/qwen2_vl.hpp"
#include "slimtrain/model/hf/roberta.hpp"
#include "slimtrain/model/hf/vit.hpp"
#include "slimtrain/model/lora.hpp"
#include "slimtrain/model/model_spec.hpp"

namespace slimtrain::model::hf {

const std::vector<HfArchitecture>& architectures() {
  static const std::vector<HfArchitecture> all = {
      bert_architecture(),
      roberta_architecture(),
      roberta_alias("xlm-roberta", "XLMRobertaForSequenceClassification", "XLMRoberta"),
      roberta_alias("camembert", "CamembertForSequenceClassification", "Camembert"),
      distilbert_architecture(),
      vit_architecture(),
      qwen2_architecture(),
      llama_architecture(),
      qwen2_vl_architecture(),
      qwen2_5_vl_architecture(),
  };
  return all;
}

std::string model_type_list() {
  const auto& all = architectures();
  std::string list;
  for (std::size_t i = 0; i < all.size(); ++i)
    list += (i == 0 ? "" : i + 1 == all.size() ? " and " : ", ") + all[i].model_type;
  return list;
}

const HfArchitecture& architecture(const std::string& model_type, const std::string& where) {
  for (const HfArchitecture& a : architectures())
    if (a.model_type == model_type) return a;
  SLIMTRAIN_THROW(ConfigError, where, ": model_type \"", model_type,
                  "\" has no native module in slimtrain (it has ", model_type_list(),
                  "); train it through TorchScript (docs/models.md)");
}

const HfConfig& config_of(const ModelSpec& spec) {
  if (!spec.hf) {  // a spec from a checkpoint: its kept config.json, parsed on first use
    if (spec.hf_config.empty())
      SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": its config was not read");
    spec.hf = parse_config_text(spec.hf_config, "--model " + spec.model_option());
  }
  return *spec.hf;
}

std::shared_ptr<ClassifierImpl> build_model(const ModelSpec& spec) {
  std::shared_ptr<ClassifierImpl> model = config_of(spec).architecture().build(spec);
  // Built in, so that training, evaluation and export all see the same parameters.
  if (!spec.lora.empty()) {
    const auto* hf = dynamic_cast<const HfModel*>(model.get());
    if (hf == nullptr || !hf->applies_lora())
      SLIMTRAIN_THROW(ConfigError, "--lora: ", spec.model_option(), " (model_type \"",
                      config_of(spec).model_type,
                      "\") has no adapters yet (BERT, RoBERTa, XLM-R, "
                      "DistilBERT, ViT, Qwen2, Llama and Qwen2-VL have)");
    attach_lora(*model, LoraOptions::parse(spec.lora), hf->head_names(), spec.lora_train);
  }
  return model;
}

}  // namespace slimtrain::model::hf
