#pragma once
/** @brief A trained model back from a checkpoint, checked against the data it will see. */

#include <cstdint>
#include <memory>
#include <string>

#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

struct CheckpointModel {
  std::shared_ptr<model::ClassifierImpl> model;
  std::string checkpoint;  ///< the step directory actually loaded
  std::int64_t step = 0;
};

/**
 * @brief Resolves `checkpoint` (a step directory, or a run directory for its newest checkpoint
 * that verifies), verifies and loads it into a model built from its stored spec. A checkpoint
 * whose input shape or class count differs from `info` is a ConfigError naming both files.
 */
CheckpointModel load_checkpoint_model(const std::string& checkpoint, const data::DatasetInfo& info);

}  // namespace slimtrain::eval
