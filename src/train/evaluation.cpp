#include "slimtrain/train/evaluation.hpp"

#include "slimtrain/comm/progress.hpp"
#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/split_evaluation.hpp"

namespace slimtrain::train {

void choose_eval_splits(Session& s) {
  const TrainConfig& cfg = s.cfg;
  const data::DatasetInfo& info = s.info;
  auto named = [&](const char* option, const std::string& split) {
    if (split != "none" && !info.has_split(split))
      SLIMTRAIN_THROW(ConfigError, option, ": ", cfg.data, " has no split '", split, "' (it has ",
                      info.split_list(), ")");
    return split == "none" ? std::string() : split;
  };
  if (!cfg.eval_split.empty())
    s.eval_split = named("--eval-split", cfg.eval_split);
  else
    s.eval_split = info.has_split("val") ? "val" : info.has_split("test") ? "test" : "";
  if (cfg.eval_every > 0 && s.eval_split.empty())
    SLIMTRAIN_THROW(ConfigError, "--eval-every ", cfg.eval_every, ": ", cfg.data,
                    " has no split to evaluate on (it has ", info.split_list(),
                    "); train with --eval-every 0, or add a val or test split");
  if (!cfg.final_split.empty())
    s.final_split = named("--final-split", cfg.final_split);
  else
    s.final_split = info.has_split("test") ? "test" : s.eval_split;
}

std::string describe_eval_splits(const Session& s) {
  std::string out;
  if (s.cfg.eval_every > 0)
    out = detail::concat("evaluating on '", s.eval_split, "' every ", s.cfg.eval_every, " steps, ");
  if (!s.final_split.empty()) return out + "the final evaluation on '" + s.final_split + "'";
  return out + no_final_evaluation(s);
}

std::string no_final_evaluation(const Session& s) {
  if (s.cfg.final_split == "none") return "no final evaluation (--final-split none)";
  return detail::concat("no final evaluation: ", s.cfg.data, " has no split for it (it has ",
                        s.info.split_list(), ")");
}

eval::EvalOutcome run_evaluation(Session& s, const std::string& split, const char* purpose,
                                 std::int64_t step, bool with_confusion) {
  comm::set_activity(purpose, step);
  const auto started = Clock::now();
  eval::SplitEvaluation what;
  what.model = s.model.get();
  what.info = &s.info;
  what.split = split;
  what.shard.batch_size = s.cfg.eval_batch_size;
  // On a GPU, in the precision the model trains in (on a CPU in float32, as `slimtrain eval`,
  // unless its weights are held in bf16: --lora's frozen base with bf16, --weights bf16).
  what.shard.bf16 = s.precision.bf16() &&
                    (s.device.kind == "cuda" || !s.spec.lora.empty() || s.masters != nullptr);
  what.shard.confusion_max_classes = s.cfg.confusion_max_classes;
  what.shard.batch_remedy = "train with --max-length or a smaller --eval-batch-size";
  // --shard parameters gathers each layer as evaluation reaches it too (layer_gate.hpp).
  what.shard.forwards_alike = s.layer_gate != nullptr;
  what.policy.deadline_s = s.cfg.eval_deadline_s;
  what.policy.agree_timeout_s = s.cfg.collective_timeout_s + s.cfg.eval_deadline_s;
  what.policy.retries = s.cfg.eval_retries;
  what.before_pass = [&] {
    if (s.fault.armed(s.rt.rank(), FaultPhase::eval, step)) s.fault.fire();
  };
  if (s.layer_gate) s.shards->reset_peak();
  const eval::EvalOutcome o = eval::evaluate_split(what, *s.eval_control);
  s.run_log->end_progress_line();
  if (o.ok) {
    log::info_rank0(purpose, " on '", split, "' at step ", step, ": ", o.metrics.summary());
    nlohmann::json fields = o.metrics.to_json();
    fields["step"] = step;
    fields["split"] = split;
    if (with_confusion) fields["confusion"] = o.metrics.confusion_json();
    fields["bytes_sent"] = o.bytes_sent;
    const double seconds = seconds_since(started);
    fields["seconds"] = seconds;
    // All ranks' samples over the evaluation's wall time, agreement included.
    fields["samples_per_s"] = seconds > 0 ? static_cast<double>(o.metrics.count) / seconds : 0.0;
    // A retried evaluation shows how many attempts it took and the batch that succeeded.
    fields["attempts"] = o.attempts;
    fields["eval_batch_size"] = o.batch_size;
    if (s.layer_gate) {  // the most weights gathered at once, against the model whole
      fields["gathered_peak_bytes"] = s.shards->peak_held_bytes();
      fields["weights_whole_bytes"] = s.shards->bytes();
    }
    s.run_log->event("eval", fields);
  } else if (o.input_error) {
    // The split's own samples failed (a batch memory cannot hold, a sequence past the model's
    // positions): every evaluation would, so the run ends with exit 2, printed by the ranks that
    // saw it, rather than training on blind.
    DataError error(o.input_error_message.empty()
                        ? "another rank's evaluation input failed"
                        : detail::concat(purpose, " on '", split, "' at step ", step, ": ",
                                         o.input_error_message),
                    __FILE__, __LINE__);
    if (o.input_error_message.empty()) error.mark_told_by_peer();
    throw error;
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
