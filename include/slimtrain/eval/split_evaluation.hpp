#pragma once
/**
 * @brief "Evaluate this model on this split under this policy", the one way both the trainer's
 * evaluations and `slimtrain eval` run: each rank's exact share of the split (shard_pass.hpp),
 * its statistics reduced on the control plane under the policy's deadline, one outcome on every
 * rank (evaluator.hpp). What the caller does with the outcome (an event, a table) is its own.
 */
#include <cstdint>
#include <functional>
#include <string>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/evaluator.hpp"
#include "slimtrain/eval/shard_pass.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

struct SplitEvaluation {
  model::ClassifierImpl* model = nullptr;
  const data::DatasetInfo* info = nullptr;  ///< with mean/std known
  std::string split;
  ShardOptions shard;  ///< the batch, bf16, the confusion limit, a batch's remedy
  EvalPolicy policy;
  /** @brief When set, this rank's logits of the last pass (eval --predictions). */
  ShardPredictions* predictions = nullptr;
  /** @brief Run before each local pass (SLIMTRAIN_INJECT's eval faults); may be empty. */
  std::function<void()> before_pass;
};

/** @brief Collective over `control` (the ranks of the job, one share each). */
EvalOutcome evaluate_split(const SplitEvaluation& what, comm::ControlPlane& control);

}  // namespace slimtrain::eval
