#pragma once
/**
 * @brief Llama (model_type "llama"): LlamaForSequenceClassification, the decoder of decoder.hpp
 * with LlamaConfig's fields: attention_bias puts biases on q, k, v and o_proj, mlp_bias on the
 * feed-forward's three projections; Llama 3.1's rotary scaling (rope_type llama3) and the linear
 * kind.
 */
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

HfArchitecture llama_architecture();

}  // namespace slimtrain::model::hf
