#pragma once
/** @brief A trained model back from a checkpoint, checked against the data it will see. */

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/ckpt/verify.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

struct CheckpointModel {
  std::shared_ptr<model::ClassifierImpl> model;
  std::string checkpoint;  ///< the step directory actually loaded
  std::int64_t step = 0;
  std::vector<std::string> class_names;  ///< the training data's, where the checkpoint has them
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
 * torchscript checkpoint when it is no longer where the checkpoint recorded it.
 */
CheckpointModel load_checkpoint_model(const std::string& dir, const data::DatasetInfo& info,
                                      ckpt::VerifyDepth depth = ckpt::VerifyDepth::checksums,
                                      const std::string& model = "");

/** @brief The same without a data file: the input shape and classes recorded in the checkpoint. */
CheckpointModel load_checkpoint_model(const std::string& dir, const std::string& model);

}  // namespace slimtrain::eval
