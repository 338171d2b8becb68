#pragma once
/**
 * @brief An evaluation during training: the local pass over this rank's share, the statistics
 * reduced on the evaluation control plane under --eval-deadline, and the eval or eval_skipped
 * event. A skipped evaluation is skipped on every rank and training goes on.
 */
#include <cstdint>
#include <string>

#include "slimtrain/eval/evaluator.hpp"
#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

/** @brief Evaluates on `split` at `step`; `purpose` names it in the log ("evaluation"). */
eval::EvalOutcome run_evaluation(Session& s, const std::string& split, const char* purpose,
                                 std::int64_t step);

}  // namespace slimtrain::train
