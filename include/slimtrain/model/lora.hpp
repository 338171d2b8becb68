#pragma once
/**
 * @brief --lora: low-rank adapters beside a model's linear layers, as PEFT's LoRA makes them.
 *
 * A targeted linear layer W gets two children, lora_A (r x in, Kaiming-uniform as PEFT's
 * default) and lora_B (out x r, zeros), so that its output becomes
 * W x + (alpha / r) * B A dropout(x): at first the base model's own output. The children carry
 * PEFT's names (`...q_proj.lora_A.weight`), which is what its adapter files hold under
 * `base_model.model.`. The base weights are frozen: no gradient, no optimizer state, never on the
 * data plane; what trains is the adapters, the classification head and the modules --lora-train
 * names. A model applies the adapters where its forward calls lora_linear() for a linear layer;
 * the hf models do for every linear layer of their bodies.
 */
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/model/grad_sink.hpp"
#include "slimtrain/model/lora_options.hpp"

namespace slimtrain::model {

/** @brief A targeted layer's A matrix and what its forward needs: the scale and the dropout. */
class LoraAImpl : public torch::nn::Module {
 public:
  LoraAImpl(std::int64_t in, std::int64_t r, double scale, double dropout);
  torch::Tensor weight;  ///< [r, in]
  double scale, dropout;
};
TORCH_MODULE(LoraA);

/** @brief layer(x), plus its adapter's (alpha / r) B A dropout(x) when it has one; the layer's
 * own weight gradients offered to `sink` when given (grad_sink.hpp). */
torch::Tensor lora_linear(torch::nn::Linear layer, const torch::Tensor& x,
                          GradSink* sink = nullptr);

/** @brief Whether parameter `name` is an adapter's (its path holds lora_A or lora_B). */
bool is_adapter_name(const std::string& name);

/**
 * @brief Adds the adapters to every linear layer of `model` that `options` targets, except
 * the head (parameters named in `head`), and freezes every parameter except the adapters, the
 * head and the modules `train` names (each a module name or a path prefix: "embed_tokens",
 * "model.norm"). Returns the targeted layers' paths; ConfigError naming --lora when none matches
 * (with the linear layers' names there are) and naming --lora-train for a name that matches no
 * parameter.
 */
std::vector<std::string> attach_lora(torch::nn::Module& model, const LoraOptions& options,
                                     const std::vector<std::string>& head,
                                     const std::vector<std::string>& train);

/**
 * @brief For the memory plan, from a checkpoint's headers before any model is built: the values
 * of the adapter `options` would put beside stored tensor `name` of `shape` (r x (in + out) for a
 * targeted layer's 2-D weight; all-linear: any 2-D weight but an embedding's and the head's), 0
 * otherwise.
 */
std::int64_t lora_adapter_values(const std::string& name, const std::vector<std::int64_t>& shape,
                                 const LoraOptions& options);
/** @brief Whether stored tensor `name` trains in full beside the adapters: the head's (classifier,
 * pre_classifier, score) or a module `train` names (--lora-train). */
bool lora_trains_in_full(const std::string& name, const std::vector<std::string>& train);

/**
 * @brief --lora with bf16: the frozen weights held in bfloat16 (they never change, so they need
 * no float32 master), half their bytes; a weight made without memory (DeferredWeights) gets its
 * memory here, bf16 when frozen, to be filled by the load. Returns the values now in bf16.
 */
std::int64_t hold_frozen_in_bf16(torch::nn::Module& model);

/** @brief W += (alpha / r) B A for every adapter, in place (export --merge-lora). */
void merge_lora(torch::nn::Module& model);

}  // namespace slimtrain::model
