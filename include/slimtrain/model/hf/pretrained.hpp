#pragma once
/**
 * @brief A checkpoint's tensors copied into an hf model name to tensor, as from_pretrained loads
 * them: a walk over the model's parameter names (the checkpoint's own), with the head created
 * when the checkpoint lacks it or sized it for other labels. The tensors come from a
 * WeightSource (the safetensors files, opened by whoever calls: eval's pretrained_model.cpp).
 */
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model::hf {

/** @brief Where the tensors come from: names, shapes and reading by name. */
struct WeightSource {
  std::string where;  ///< names the file(s) in errors
  std::function<bool(const std::string&)> has;
  std::function<std::vector<std::int64_t>(const std::string&)> shape;
  std::function<torch::Tensor(const std::string&)> read;
  /** @brief Elements [from, from + count) of a tensor, row-major, of its stored dtype. */
  std::function<torch::Tensor(const std::string&, std::int64_t from, std::int64_t count)>
      read_elements;
  std::function<std::vector<std::string>()> names;
};

/** @brief What loading found: tensors loaded, the head created, checkpoint tensors left out. */
struct PretrainedLoad {
  std::int64_t loaded = 0;
  std::vector<std::string> created;  ///< the head (and a pooler a base checkpoint lacks)
  std::string created_reason;        ///< "missing" or "[2, 512] where the data has 4 classes"
  std::vector<std::string> ignored;  ///< other heads' tensors (cls.*, lm_head.*), position_ids
};

/** @brief Which checkpoint tensor fills each parameter, found before anything is read. */
struct PretrainedMatch {
  PretrainedLoad load;
  std::map<const void*, std::string> stored;  ///< a parameter's TensorImpl -> its tensor's name
};

/** @brief load_pretrained's checks and its name for each parameter, reading headers only: the
 * same DataErrors, nothing copied (--shard parameters reads each rank's slices from it). */
PretrainedMatch match_pretrained(ClassifierImpl& model, const WeightSource& source);

/**
 * @brief Copies the source's tensors into `model` (an hf model) by name, converted to its dtype.
 * A name may lack the base prefix ("bert.") as a base model's checkpoint has it. DataError naming
 * the file and the tensor for the first tensor the model needs that is missing or of another
 * shape, and for the first the checkpoint holds that no part of the model has; the head (and
 * BERT's pooler) is kept at its fresh initialisation instead when missing or shaped for another
 * label count, as from_pretrained does, and named in the result.
 */
PretrainedLoad load_pretrained(ClassifierImpl& model, const WeightSource& source);

/** @brief Whether a checkpoint tensor is one transformers leaves out when loading a classifier:
 * another head's (cls.*, lm_head.*) or a non-learned buffer (position_ids, token_type_ids). */
bool ignorable(const std::string& name);

/** @brief The one-line warning about a created head ("" when none was created). */
std::string describe_created(const PretrainedLoad& load, const std::string& dir);

}  // namespace slimtrain::model::hf
