#pragma once
/**
 * @brief What every HuggingFace model (--model hf:DIR) is to the rest of slimtrain: a classifier
 * whose parameters carry the checkpoint's own names, so that loading is a walk over names
 * (pretrained.hpp); which of them are the classification head a checkpoint may lack or have sized
 * for other labels; and the few building blocks each architecture registers under its names.
 */
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/hf/config.hpp"

namespace slimtrain::model::hf {

class HfModel : public ClassifierImpl {
 public:
  /** @brief The config the model was built from (its architecture's own struct underneath). */
  virtual const HfConfig& config() const = 0;
  /** @brief The body's prefix in a checkpoint with a head ("bert.", "model."): a base model's
   * checkpoint stores the same tensors without it. */
  virtual std::string base_prefix() const = 0;
  /** @brief The head's parameter names: created, not loaded, when missing or misshapen. */
  virtual std::vector<std::string> head_names() const = 0;
  /** @brief Whether forward runs its body's linear layers through lora_linear() (lora.hpp), so
   * that --lora's adapters take part. */
  virtual bool applies_lora() const { return false; }
  /** @brief Why export --hf cannot write this model's adapters in PEFT's format ("": it can).
   * PEFT names an adapter by the path of its layer in transformers' module tree. */
  virtual std::string peft_adapter_refusal() const { return ""; }
  /** @brief A pooler a base checkpoint may lack too (BERT's), or "". */
  virtual std::string optional_prefix() const { return ""; }
  /**
   * @brief Where a checkpoint may store parameter `name`, most likely first: the name, and the
   * name without base_prefix() (a base model's checkpoint). An architecture whose checkpoints
   * come in two key layouts adds the other's name (transformers' _checkpoint_conversion_mapping).
   */
  virtual std::vector<std::string> stored_names(const std::string& name) const;

 protected:
  explicit HfModel(const ModelSpec& spec) : ClassifierImpl(spec) {}
};

/** @brief A Linear under `name` in `parent`, N(0, init) weights and zero biases (transformers'
 * _init_weights with its initializer_range); `filled_by_load`: shaped, without memory and with no
 * random number drawn, for a load to fill (model::DeferredWeights). */
torch::nn::Linear add_linear(torch::nn::Module& parent, const std::string& name, std::int64_t in,
                             std::int64_t out, double init, bool bias = true,
                             bool filled_by_load = false);
/** @brief A LayerNorm over `size` features under `name`. */
torch::nn::LayerNorm add_norm(torch::nn::Module& parent, const std::string& name, std::int64_t size,
                              double eps);
/** @brief An embedding table under `name`, N(0, init) as transformers initialises one. */
torch::nn::Embedding add_embedding(torch::nn::Module& parent, const std::string& name,
                                   std::int64_t count, std::int64_t size, double init,
                                   bool filled_by_load = false);
/** @brief An RMSNorm's weight (ones) registered as transformers names it: NAME.weight. */
torch::Tensor add_rms_weight(torch::nn::Module& parent, const std::string& name, std::int64_t size);

/** @brief A child module under `name`, holding others: the dotted names transformers gives. */
std::shared_ptr<torch::nn::Module> group(torch::nn::Module& parent, const std::string& name);
/** @brief The activation config.json's hidden_act names applied to x (config_reader.hpp). */
torch::Tensor activation(const std::string& name, const torch::Tensor& x);
/** @brief spec.hf as architecture C's config (Error when it is another architecture's). */
template <class C>
std::shared_ptr<const C> config_as(const ModelSpec& spec) {
  auto typed = std::dynamic_pointer_cast<const C>(spec.hf);
  if (!typed) throw std::logic_error("--model " + spec.model_option() + ": another config");
  return typed;
}
/** @brief ConfigError when the data's token ids pass the model's vocabulary. */
void check_vocabulary(const ModelSpec& spec, std::int64_t vocab_size);
/** @brief DataError when a batch's sequences of `tokens` pass the model's `limit`. */
void check_length(const ModelSpec& spec, std::int64_t tokens, std::int64_t limit);
/**
 * @brief Batches are padded to a multiple of 8 tokens; a batch whose real tokens fit the model
 * but whose padding passes its `limit` loses the padding past it (inputs cut to `limit`
 * columns). Cut only where the mask is 0 past the limit; otherwise the inputs as they are.
 */
NamedInputs fit_padding(const NamedInputs& inputs, std::int64_t limit);

}  // namespace slimtrain::model::hf
