#include "slimtrain/eval/split_evaluation.hpp"

#include <optional>

#include "slimtrain/core/error.hpp"

namespace slimtrain::eval {
namespace {

// forwards_alike: the ranks walk the layers' gathers in step, so a rank late to the evaluation
// would hold the others at a gather until its deadline ended the job. Readiness is agreed first,
// under the evaluation's deadline: a late rank has the evaluation skipped on every rank instead.
void agree_ready(comm::ControlPlane& control, const EvalPolicy& policy) {
  comm::OpOptions options;
  options.timeout_s = policy.deadline_s;
  options.tag = "eval-ready";
  std::optional<TimeoutError> late;
  try {
    control.all_reduce(std::vector<std::int64_t>{1}, comm::ReduceOp::sum, options);
  } catch (const TimeoutError& e) {
    late = e;
  }
  comm::OpOptions agree_options;
  agree_options.timeout_s = policy.agree_timeout_s;
  agree_options.tag = "eval-ready-agree";
  const bool all_ready = control.agree(!late, agree_options);
  if (late) throw *late;
  if (!all_ready) throw PeerLate("another rank was late to the evaluation");
}

}  // namespace

EvalOutcome evaluate_split(const SplitEvaluation& what, comm::ControlPlane& control) {
  auto local_pass = [&](std::int64_t batch_size) {
    if (what.before_pass) what.before_pass();
    if (what.shard.forwards_alike) agree_ready(control, what.policy);
    ShardOptions options = what.shard;
    options.batch_size = batch_size;  // halved by a retry
    return evaluate_shard(*what.model, *what.info, what.split, control.rank(), control.size(),
                          options, what.predictions);
  };
  return evaluate(local_pass, control, what.info->num_classes, what.info->class_names,
                  what.shard.batch_size, what.policy, what.shard.confusion_max_classes);
}

}  // namespace slimtrain::eval
