#pragma once
/**
 * @brief A HuggingFace checkpoint (--model hf:DIR, as save_pretrained writes it) built natively
 * and its weights loaded name to tensor from DIR's safetensors: what `train` starts from and
 * `eval` evaluates without a training run.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

/** @brief What loading found: tensors loaded, the head created, checkpoint tensors left out. */
struct PretrainedLoad {
  std::int64_t loaded = 0;
  std::vector<std::string> created;  ///< the head (and a pooler a base checkpoint lacks)
  std::string created_reason;        ///< "missing" or "[2, 512] where the data has 4 classes"
  std::vector<std::string> ignored;  ///< other heads' tensors (cls.*, lm_head.*), position_ids
};

/**
 * @brief Copies DIR's tensors into `model` (an hf model) by name, converted to its dtype. A name
 * may lack the base prefix ("bert.") as a base model's checkpoint has it. DataError naming the
 * file and the tensor for the first tensor the model needs that is missing or of another shape,
 * and for the first the checkpoint holds that no part of the model has; the classification head
 * (and BERT's pooler) is kept at its fresh initialisation instead when missing or shaped for
 * another label count, as from_pretrained does, and named in the result.
 */
PretrainedLoad load_pretrained_weights(model::ClassifierImpl& model, const std::string& dir);

/** @brief The one-line warning about a created head ("" when none was created). */
std::string describe_created(const PretrainedLoad& load, const std::string& dir);

/**
 * @brief `model_option` ("hf:DIR") built for the data in `info` (its classes and vocabulary) with
 * DIR's weights; `checkpoint` names DIR and the step is 0. Logs the created head on rank 0
 * (`log_rank0`).
 */
CheckpointModel load_pretrained_model(const std::string& model_option,
                                      const data::DatasetInfo& info, bool log_rank0);

/**
 * @brief ConfigError naming --model and the file when `info`'s inputs are not what the model
 * reads: images of a layout-1 file for a ViT, input_ids of a layout-2 file for the text encoders.
 */
void check_hf_inputs(const model::ModelSpec& spec, const data::DatasetInfo& info);

/** @brief The spec of `model_option` for `info`: its config read from DIR, classes and vocab. */
model::ModelSpec pretrained_spec(const std::string& model_option, const data::DatasetInfo& info);

}  // namespace slimtrain::eval
