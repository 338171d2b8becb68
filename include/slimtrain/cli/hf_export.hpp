#pragma once
/**
 * @brief `slimtrain export --hf`: a model trained from hf:DIR handed back to transformers, as a
 * directory from_pretrained loads: config.json (the checkpoint's own, with id2label and label2id
 * from the training data's class names and the sequence-classification architecture),
 * model.safetensors (every parameter under its HuggingFace name, float32) and the tokenizer and
 * preprocessor files copied from DIR where they still are.
 */
#include <string>

#include "slimtrain/cli/embed_job.hpp"

namespace slimtrain::cli {

/**
 * @brief Writes config.output as a directory that appears whole or not at all (refused when it
 * exists, unless config.force). ConfigError for a checkpoint of a model not trained from hf:DIR.
 * Returns the checkpoint used.
 */
std::string run_hf_export(const EmbedJobConfig& config);

}  // namespace slimtrain::cli
