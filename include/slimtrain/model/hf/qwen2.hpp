#pragma once
/**
 * @brief Qwen2 (model_type "qwen2"): Qwen2ForSequenceClassification, the decoder of decoder.hpp
 * with Qwen2Config's defaults: biases on q, k and v (never on o_proj or the feed-forward);
 * use_sliding_window is refused (slimtrain attends to the whole causal context).
 */
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

HfArchitecture qwen2_architecture();

}  // namespace slimtrain::model::hf
