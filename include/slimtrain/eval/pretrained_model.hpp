#pragma once
/**
 * @brief A HuggingFace checkpoint (--model hf:DIR, as save_pretrained writes it) built natively
 * and its weights loaded from DIR's safetensors (the loading itself is model/hf/pretrained.hpp's):
 * what `train` starts from and `eval` evaluates without a training run.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/hf/pretrained.hpp"

namespace slimtrain::eval {

/** @brief DIR's safetensors (one file or an index) as load_pretrained reads them: headers read
 * now, each file opened when one of its tensors is first asked for. */
model::hf::WeightSource hf_weight_source(const std::string& dir);

/** @brief DIR's safetensors (one file or an index) copied into `model` by name. */
model::hf::PretrainedLoad load_hf_weights(model::ClassifierImpl& model, const std::string& dir);

/** @brief Values of the tensors DIR's safetensors hold that a classifier loads, and of the
 * largest, from the headers alone (the memory plan's count, before any weight exists). */
struct CheckpointCount {
  std::int64_t values = 0, largest = 0;
  /** With `spec`'s --lora: the values that train (the adapters, which add to `values`, the head
   * and --lora-train's modules) and the largest of them; otherwise all of them. */
  std::int64_t trainable = 0, largest_trainable = 0;
};
CheckpointCount hf_checkpoint_parameters(const std::string& dir,
                                         const model::ModelSpec* spec = nullptr);

/**
 * @brief What a --lora checkpoint keeps of the base model it leaves out: its absolute directory
 * and a digest of its safetensors headers (every tensor's name, dtype, shape and place) and of
 * each tensor's first and last 64 values, which a re-saved base or a fine-tune of the same shapes
 * changes; the rest of the values is not read (a 7B base is 15 GB).
 */
nlohmann::json lora_base_record(const std::string& dir);
/** @brief DataError unless `dir` is the base `record` names (lora_base_record's digest), where
 * `checkpoint` is the adapter checkpoint that needs it. */
void check_lora_base(const nlohmann::json& record, const std::string& dir,
                     const std::string& checkpoint);

/** @brief The log lines of a load: tensors loaded and left out (info), a created head (warn). */
void log_hf_load(const model::hf::PretrainedLoad& load, const model::ModelSpec& spec,
                 bool into_shards = false);

/**
 * @brief `model_option` ("hf:DIR") built for the data in `info` (its classes and vocabulary) with
 * DIR's weights; `checkpoint` names DIR and the step is 0. Logs the load (`log_rank0`).
 */
CheckpointModel load_pretrained_model(const std::string& model_option,
                                      const data::DatasetInfo& info, bool log_rank0,
                                      bool bf16 = false);

}  // namespace slimtrain::eval
