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

/**
 * @brief Sets s.eval_split and s.final_split from --eval-split/--final-split and the file's
 * splits. Periodic: val, else test. Final: test, else the periodic split. Either may be none (a
 * file with only /train): then --eval-every must be 0 and the final evaluation is skipped.
 * ConfigError for a named split the file lacks.
 */
void choose_eval_splits(Session& s);
/** @brief "evaluating on 'val' every 100 steps, finally on 'test'", or what is skipped. */
std::string describe_eval_splits(const Session& s);
/** @brief Why no final evaluation runs: --final-split none, or the file has no split for it. */
std::string no_final_evaluation(const Session& s);

/**
 * @brief Evaluates on `split` at `step`; `purpose` names it in the log ("evaluation"). The final
 * evaluation also records its confusion matrix (C*C integers: once per run, not per evaluation).
 */
eval::EvalOutcome run_evaluation(Session& s, const std::string& split, const char* purpose,
                                 std::int64_t step, bool with_confusion = false);

}  // namespace slimtrain::train
