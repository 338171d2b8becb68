#pragma once
/** @brief A trained model back from a checkpoint, checked against the data it will see. */

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/ckpt/checkpoint_state.hpp"
#include "slimtrain/ckpt/verify.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

struct CheckpointModel {
  std::shared_ptr<model::ClassifierImpl> model;
  std::string checkpoint;  ///< the step directory actually loaded
  std::int64_t step = 0;
  std::vector<std::string> class_names;  ///< the training data's, where the checkpoint has them
  /** @brief open_checkpoint_model: the checkpoint whose weights stay in its file. */
  std::shared_ptr<const ckpt::CheckpointState> stored;
  /** @brief A --lora checkpoint's base model (hf:DIR), where stored_weight reads what the
   * checkpoint leaves out; "" otherwise. */
  std::string base_dir;
};

/**
 * @brief The step directory `checkpoint` means: a step directory as given, the one a `latest`
 * file names, or a run directory's newest checkpoint that verifies. DataError when there is none.
 * Under mpirun, resolve on one rank and share the answer (a run still writing checkpoints could
 * give each rank another one).
 */
std::string resolve_checkpoint(const std::string& checkpoint);

/**
 * @brief Verifies the step directory `dir` (to `depth`) and loads it into a model built from its
 * stored spec. A checkpoint whose input shape or class count differs from `info` is a
 * ConfigError naming both files. `model` ("torchscript:PATH") supplies the module file of a
 * torchscript checkpoint when it is no longer where the checkpoint recorded it. With `bf16`
 * (eval --precision bf16) every floating parameter is held in bfloat16, and a --lora
 * checkpoint's frozen base is never whole in float32 on the way.
 */
CheckpointModel load_checkpoint_model(const std::string& dir, const data::DatasetInfo& info,
                                      ckpt::VerifyDepth depth = ckpt::VerifyDepth::checksums,
                                      const std::string& model = "", bool bf16 = false);

/** @brief Every floating parameter of `model` cast to bfloat16 in place, but a BatchNorm's
 * (model/bf16_weights.hpp); buffers stay. */
void hold_in_bf16(torch::nn::Module& model);

/** @brief The same without a data file: the input shape and classes recorded in the checkpoint. */
CheckpointModel load_checkpoint_model(const std::string& dir, const std::string& model);

/**
 * @brief load_checkpoint_model without a data file and with the weights left in the checkpoint's
 * file: the model made under model::DeferredWeights (a decoder's body without memory), every
 * tensor checked against it, none copied. stored_weight reads one: what export --hf writes from,
 * so that it never holds the model whole.
 */
CheckpointModel open_checkpoint_model(const std::string& dir, const std::string& model = "");

/** @brief The checkpoint's value of the model's tensor `name` (a parameter's or a buffer's),
 * read from the file of an open_checkpoint_model. */
torch::Tensor stored_weight(const CheckpointModel& opened, const std::string& name);

}  // namespace slimtrain::eval
