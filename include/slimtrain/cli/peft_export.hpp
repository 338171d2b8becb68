#pragma once
/**
 * @brief `slimtrain export --hf` of a run trained with --lora: PEFT's adapter format (what
 * PeftModel.from_pretrained(base, DIR) loads), or with --merge-lora the merged model's tensors.
 *
 * The adapter directory holds adapter_config.json (peft_type LORA, task_type SEQ_CLS, r,
 * lora_alpha, lora_dropout, target_modules as the targeted layers' full paths, modules_to_save:
 * the head and --lora-train's modules, base_model_name_or_path: the hf:DIR trained from) and
 * adapter_model.safetensors: every trained tensor under `base_model.model.` and its own name, as
 * PEFT saves them (lora_A, lora_B; the head and the modules trained in full).
 */
#include <string>
#include <vector>

#include "slimtrain/ckpt/safetensors_shards.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"

namespace slimtrain::cli {

/** @brief adapter_config.json's contents for `loaded`'s --lora (its spec's lora text). */
std::string peft_adapter_config(const eval::CheckpointModel& loaded);

/** @brief The trained tensors under PEFT's names, each read from the checkpoint when written. */
std::vector<ckpt::TensorToWrite> peft_adapter_tensors(const eval::CheckpointModel& loaded);

/** @brief --merge-lora: the model's tensors with each adapter merged into its layer's weight
 * (W + alpha / r * B A) and the adapters left out: a plain transformers checkpoint. */
std::vector<ckpt::TensorToWrite> merged_tensors(const eval::CheckpointModel& loaded);

}  // namespace slimtrain::cli
