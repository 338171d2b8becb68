#pragma once
/**
 * @brief The memory plan (memory_plan.hpp) for a session: the model's size before its weights
 * exist (an hf checkpoint's from its safetensors headers and config.json, so that a model no rank
 * can hold is refused before it is loaded; a built-in or TorchScript model's from the model as
 * built, which is small), the rank's budget agreed across ranks, the start-up line, and the
 * refusal.
 */
#include <nlohmann/json.hpp>

#include "slimtrain/train/memory_plan.hpp"
#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

/** @brief An hf spec's size from DIR's headers and config (layers, widths), and the data's
 * longest token sequence (or the image's patches). */
ModelSize hf_model_size(const model::ModelSpec& spec, const data::DatasetInfo& info);

/** @brief A built model's parameters (no activation estimate). */
ModelSize built_model_size(model::ClassifierImpl& model);

/**
 * @brief Plans `model` for the session's settings, agrees the smallest budget across ranks
 * (collective on the control plane), logs the plan on rank 0 and keeps it in the session.
 * ConfigError (exit 2) naming the numbers and the smallest --shard that fits when it does not.
 */
void check_memory_plan(Session& s, const ModelSize& model);

/** @brief The start record's "memory_plan": each part in bytes, the total and the budget. */
nlohmann::json memory_plan_json(const Session& s);

}  // namespace slimtrain::train
