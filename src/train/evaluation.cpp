#include "slimtrain/train/evaluation.hpp"

#include <chrono>

#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/shard_pass.hpp"

namespace slimtrain::train {

eval::EvalOutcome run_evaluation(Session& s, const std::string& split, const char* purpose,
                                 std::int64_t step) {
  comm::set_activity(purpose, step);
  const auto started = std::chrono::steady_clock::now();
  auto local_pass = [&](std::int64_t batch_size) {
    if (s.fault.armed(s.rt.rank(), FaultPhase::eval, step)) s.fault.fire();
    return eval::evaluate_shard(*s.model, s.cfg.data, split, s.rt.rank(), s.rt.size(), batch_size,
                                s.info.num_classes);
  };
  eval::EvalPolicy policy;
  policy.deadline_s = s.cfg.eval_deadline_s;
  policy.agree_timeout_s = s.cfg.collective_timeout_s + s.cfg.eval_deadline_s;
  policy.retries = s.cfg.eval_retries;
  eval::EvalOutcome o = eval::evaluate(local_pass, *s.eval_control, s.info.num_classes,
                                       s.info.class_names, s.cfg.eval_batch_size, policy);
  s.run_log->end_progress_line();
  if (o.ok) {
    log::info_rank0(purpose, " on '", split, "' at step ", step, ": ", o.metrics.summary());
    nlohmann::json fields = o.metrics.to_json();
    fields["step"] = step;
    fields["split"] = split;
    fields["bytes_sent"] = o.bytes_sent;
    fields["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // A retried evaluation shows how many attempts it took and the batch that succeeded.
    fields["attempts"] = o.attempts;
    fields["eval_batch_size"] = o.batch_size;
    s.run_log->event("eval", fields);
  } else {
    log::warn(purpose, " on '", split, "' at step ", step, " skipped on every rank: ", o.reason);
    s.run_log->event("eval_skipped", {{"step", step},
                                      {"split", split},
                                      {"reason", o.reason},
                                      {"late_ranks", o.late_ranks},
                                      {"attempts", o.attempts}});
  }
  return o;
}

}  // namespace slimtrain::train
