#include "slimtrain/eval/split_evaluation.hpp"

namespace slimtrain::eval {

EvalOutcome evaluate_split(const SplitEvaluation& what, comm::ControlPlane& control) {
  auto local_pass = [&](std::int64_t batch_size) {
    if (what.before_pass) what.before_pass();
    return evaluate_shard(*what.model, *what.info, what.split, control.rank(), control.size(),
                          batch_size, what.bf16, what.predictions);
  };
  return evaluate(local_pass, control, what.info->num_classes, what.info->class_names,
                  what.batch_size, what.policy);
}

}  // namespace slimtrain::eval
