#include "slimtrain/eval/split_evaluation.hpp"

namespace slimtrain::eval {

EvalOutcome evaluate_split(const SplitEvaluation& what, comm::ControlPlane& control) {
  auto local_pass = [&](std::int64_t batch_size) {
    if (what.before_pass) what.before_pass();
    ShardOptions options = what.shard;
    options.batch_size = batch_size;  // halved by a retry
    return evaluate_shard(*what.model, *what.info, what.split, control.rank(), control.size(),
                          options, what.predictions);
  };
  return evaluate(local_pass, control, what.info->num_classes, what.info->class_names,
                  what.shard.batch_size, what.policy, what.shard.confusion_max_classes);
}

}  // namespace slimtrain::eval
