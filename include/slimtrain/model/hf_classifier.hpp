#pragma once
/**
 * @brief What the HuggingFace models (--model hf:DIR: hf_bert.hpp, hf_vit.hpp) share for loading
 * a checkpoint name to tensor (eval/pretrained_model.hpp): their config, and which parameters
 * are the classification head a checkpoint may lack or have sized for other labels.
 */
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/hf_config.hpp"

namespace slimtrain::model {

class HfClassifierImpl : public ClassifierImpl {
 public:
  const HfConfig& config() const { return config_; }
  /** @brief The head's parameter names: created, not loaded, when missing or misshapen. */
  virtual std::vector<std::string> head_names() const = 0;
  /** @brief A pooler a base checkpoint may lack too (BERT's), or "". */
  virtual std::string optional_prefix() const { return ""; }

 protected:
  HfClassifierImpl(const ModelSpec& spec, HfConfig config)
      : ClassifierImpl(spec), config_(std::move(config)) {}
  /** @brief A Linear under `name` in `parent`, initialised as transformers' _init_weights. */
  torch::nn::Linear add_linear(torch::nn::Module& parent, const std::string& name, std::int64_t in,
                               std::int64_t out, bool bias = true);
  /** @brief A LayerNorm of the hidden size and the config's eps under `name`. */
  torch::nn::LayerNorm add_norm(torch::nn::Module& parent, const std::string& name = "LayerNorm");
  /** @brief The config's hidden_act applied to x. */
  torch::Tensor activation(const torch::Tensor& x) const;

 private:
  HfConfig config_;
};

/** @brief A child module under `name`, holding others: the dotted names transformers gives. */
std::shared_ptr<torch::nn::Module> hf_group(torch::nn::Module& parent, const std::string& name);
/** @brief spec.hf_config parsed; ConfigError naming --model when it is not JSON. */
HfConfig hf_config_of(const ModelSpec& spec);
/** @brief The model spec.hf_config's model_type names. */
std::shared_ptr<ClassifierImpl> make_hf_model(const ModelSpec& spec);

}  // namespace slimtrain::model
