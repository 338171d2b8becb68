#include "slimtrain/train/trainer.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/batch_memory.hpp"
#include "slimtrain/eval/shard_pass.hpp"
#include "slimtrain/model/autocast.hpp"
#include "slimtrain/runtime/heap.hpp"
#include "slimtrain/runtime/job_exit.hpp"
#include "slimtrain/runtime/process_memory.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/checkpointer.hpp"
#include "slimtrain/train/device_batches.hpp"
#include "slimtrain/train/evaluation.hpp"
#include "slimtrain/train/memory_report.hpp"
#include "slimtrain/train/model_process.hpp"
#include "slimtrain/train/nonfinite_steps.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/resume.hpp"
#include "slimtrain/train/session.hpp"
#include "slimtrain/train/step_control.hpp"
#include "slimtrain/train/step_timer.hpp"
#include "slimtrain/train/step_update.hpp"
#include "slimtrain/train/stop_signal.hpp"
#include "slimtrain/train/stragglers.hpp"
#include "slimtrain/train/sync_debug.hpp"

namespace slimtrain::train {
namespace {

// Steady-state throughput for the done event: the steps after a warm-up of one log window (at
// most half of this launch's steps), without the time of evaluations and checkpoints.
struct SteadyRate {
  std::int64_t first_step = 0;
  std::int64_t warmup_steps = 0;
  Clock::time_point start = Clock::now();
  double paused_s = 0.0;
};

class Trainer {
 public:
  Trainer(const TrainConfig& config, runtime::Runtime& rt) : cfg_(config), rt_(rt) {}
  int run();

 private:
  StepDecision train_step(const data::Batch& batch, bool log_now);
  /** @brief One micro-batch's forward and backward; the loss NaN when poisoned (test only). */
  void forward_backward(const data::Batch& b, bool poison_loss, std::int64_t micro,
                        std::int64_t micro_batches);
  void after_step(const StepDecision& d, bool log_now);
  /**
   * @brief Before anything reads the weights: the device's step learned, the gathers waited, and
   * every data-plane operation ended. A failed or aborted one throws here, so no checkpoint or
   * evaluation ever holds the results of a reduction that did not complete (a step-late read
   * resumes after an abort).
   */
  void settle(bool whole_weights = true) {
    update_->settle();
    s_->settle_weights(whole_weights);
    s_->data_plane->settle();
  }
  nlohmann::json rank_times();
  int stop_for_requeue();
  int checkpoints_failed(const CheckpointsFailed& e);
  void finish(nlohmann::json memory);
  [[noreturn]] void abort_training(const Error& e);

  const TrainConfig& cfg_;
  runtime::Runtime& rt_;
  std::unique_ptr<Session> s_;
  std::unique_ptr<Checkpointer> checkpoints_;
  std::unique_ptr<StepControl> control_;
  std::unique_ptr<StragglerWatch> stragglers_;
  StepTimer timer_;
  SteadyRate steady_;
  Position pos_;
  std::unique_ptr<NonfiniteSteps> nonfinite_;
  std::unique_ptr<StepUpdate> update_;
  std::unique_ptr<DeviceBatches> batches_;
  SyncDebugWindow sync_debug_;  ///< test only
  bool told_dropped_ = false;
};

void Trainer::forward_backward(const data::Batch& b, bool poison_loss, std::int64_t micro,
                               std::int64_t micro_batches) {
  Session& s = *s_;
  model::Output out;
  {
    model::AutocastScope autocast(s.precision.bf16(), s.device.kind == "cuda");
    out = eval::forward_batch(*s.model, b, s.torch_device);
  }
  // A layer forward did not use still has its bucket in flight; backward and the optimizer
  // step must not meet a gather writing the buffer.
  if (s.shards) s.shards->finish_in_flight();
  if (s.layer_gate) s.layer_gate->end_forward(*s.sync);  // the first forward's launch order
  if (poison_loss) out.loss = out.loss * std::numeric_limits<double>::quiet_NaN();
  timer_.enter(kBackward, pos_.step + 1);
  s.sync->set_accumulating(micro + 1 < micro_batches);
  if (micro_batches == 1)
    out.loss.backward();
  else
    (out.loss / static_cast<double>(micro_batches)).backward();
  update_->add_loss(out.loss);
}

StepDecision Trainer::train_step(const data::Batch& batch, bool log_now) {
  Session& s = *s_;
  const std::int64_t step = pos_.step + 1;
  sync_debug_.at_step(step);
  bool poison_loss = false;  // test only: this rank's loss is NaN at this step
  if (s.fault.armed(rt_.rank(), FaultPhase::train, step)) {
    s.fault.fire();
    poison_loss = s.fault.action == FaultAction::nan;
    if (s.fault.action == FaultAction::desync) {
      // Test only: one operation the other ranks do not issue, ahead of the gradient buckets.
      comm::OpOptions options;
      options.tag = "injected";
      s.data_plane->all_reduce_async(
          torch::zeros({s.fault.desync_bytes / 4},
                       torch::dtype(torch::kFloat32).device(s.torch_device)),
          comm::ReduceOp::sum, options);
    }
  }
  timer_.enter(kOptimizer, step);
  set_learning_rate(*s.optimizer, s.schedule->lr_at(pos_.step));
  s.sync->prepare();  // zeroes the buckets, which are the .grad tensors: no zero_grad()
  update_->begin(step);
  // Ranks agree on what they issued so far, so buckets may reduce as backward fills them (sync
  // time: waiting here for a slower rank is not this rank's compute).
  timer_.enter(kSync, step);
  control_->check_before_backward(step);
  // --grad-accum N: N micro-batches, each loss divided by N so the gradients autograd adds up
  // in .grad are the mean over all N; only the last backward feeds the buckets.
  const std::int64_t micro_batches = cfg_.grad_accum;
  data::Batch next;
  for (std::int64_t micro = 0; micro < micro_batches; ++micro) {
    if (micro > 0) {
      timer_.enter(kData, step);
      if (!batches_->next(next))
        SLIMTRAIN_THROW(Error, "the loader ended the epoch inside optimizer step ", step);
    }
    const data::Batch& b = micro == 0 ? batch : next;
    timer_.enter(kForward, step);
    // --overlap-gather: a built-in model waits for each layer's weights as it reaches it.
    // --shard parameters: a built-in model gathers each layer's weights as it reaches it.
    // A LoRA model's gates list its layers' weights as built, before the adapters were added:
    // it waits whole.
    if (s.shards && (!s.model->gates_weights() || !s.spec.lora.empty())) s.shards->wait_gathered();
    if (s.layer_gate) s.layer_gate->begin_forward();
    try {
      forward_backward(b, poison_loss && micro == 0, micro, micro_batches);
    } catch (const std::exception& e) {
      if (!data::is_allocation_failure(e)) throw;
      data::refuse_batch("step " + std::to_string(step) + "'s batch", b.size(), b.longest_row,
                         b.longest_length, "train", e);
    }
  }
  timer_.enter(kSync, step);
  s.sync->launch();
  update_->launched();
  // The step's one control reduction, while its buckets are in flight: a desync ends the job here.
  StepVote vote;
  vote.step = step;
  vote.stop = stop_signal() != 0;
  vote.checkpoint_due = checkpoints_->due_by_clock();
  update_->fill(vote, log_now, micro_batches);
  const StepDecision decision = control_->decide(vote);
  update_->decided();
  s.sync->wait();
  timer_.enter(kOptimizer, step);
  update_->apply(decision, step);
  ++pos_.step;
  pos_.epoch_step += micro_batches;
  timer_.count_step();
  if (!told_dropped_) {
    // Named once: what the model's forward returned and the slim boundary kept from everything.
    told_dropped_ = true;
    const std::vector<std::string> dropped = s.model->dropped_outputs();
    if (!dropped.empty() && rt_.rank() == 0)
      log::warn("forward returned ", dropped.size(), " output", dropped.size() == 1 ? "" : "s",
                " beside the logits: ", join(dropped),
                ": dropped at the slim boundary, they never reach a collective");
  }
  timer_.enter(kData, pos_.step + 1);
  return decision;
}

void Trainer::after_step(const StepDecision& d, bool log_now) {
  Session& s = *s_;
  if (pos_.step == steady_.first_step + steady_.warmup_steps) {
    steady_.start = Clock::now();
    steady_.paused_s = 0.0;
  }
  if (log_now) {
    const double rate = timer_.window_steps() * cfg_.batch_size * cfg_.grad_accum * rt_.size() /
                        timer_.window_seconds();
    const double loss = d.mean_loss.value_or(0.0);
    s.run_log->progress(pos_.epoch, pos_.step, s.total_steps, loss, rate);
    // The train event (and the window's times) every --log-every steps and at the last.
    if (pos_.step % cfg_.log_every == 0 || pos_.step == s.total_steps) {
      const nlohmann::json ranks = rank_times();
      // Rank 0's components; its sync includes waiting for the slowest rank.
      nlohmann::json train = {{"step", pos_.step},     {"epoch", pos_.epoch},
                              {"loss", loss},          {"lr", s.schedule->lr_at(pos_.step - 1)},
                              {"samples_per_s", rate}, {"step_ms", timer_.step_ms()}};
      if (!ranks.is_null()) train["ranks"] = ranks;
      s.run_log->event("train", train);
      timer_.reset_window();
    }
  }
  const auto paused_from = Clock::now();
  const bool eval_now =
      cfg_.eval_every > 0 && pos_.step % cfg_.eval_every == 0 && pos_.step < s.total_steps;
  bool new_best = false;
  if (eval_now) {
    timer_.pause("evaluation", pos_.step);
    settle(/*whole_weights=*/!s.layer_gate);  // a gated model gathers each layer as it evaluates
    const eval::EvalOutcome o = run_evaluation(s, s.eval_split, "evaluation", pos_.step);
    if (o.ok) new_best = checkpoints_->note_evaluation(o.metrics, pos_.step);
    timer_.reset_window();
  }
  // Written whether or not the evaluation at this step ran; also at a new best evaluation, so the
  // best checkpoint kept holds the weights that were evaluated.
  const bool due = checkpoints_->due_by_steps(pos_.step) || d.checkpoint_due || new_best;
  if (due && pos_.step < s.total_steps) {
    timer_.pause("checkpoint", pos_.step);
    settle(/*whole_weights=*/false);  // a checkpoint writes each rank's shard of the weights
    checkpoints_->save(pos_);
  }
  steady_.paused_s += seconds_since(paused_from);
  timer_.enter(kData, pos_.step + 1);
}

// Every rank's compute time of the window, on the control plane (one all-gather per log window).
nlohmann::json Trainer::rank_times() {
  if (rt_.size() < 2) return nullptr;
  return report_window(*s_->control, *stragglers_, *s_->run_log, timer_.phase_ms(),
                       cfg_.collective_timeout_s, pos_.step, rt_.rank());
}

// Every rank throws at the same write (failures are agreed): exit 1 everywhere, no abort.
int Trainer::checkpoints_failed(const CheckpointsFailed& e) {
  s_->run_log->end_progress_line();
  if (rt_.rank() == 0) log::error(e.what());
  s_->run_log->event("failed", {{"step", pos_.step}, {"reason", e.what()}});
  return kExitFailure;
}

int Trainer::stop_for_requeue() {
  s_->run_log->end_progress_line();
  log::warn("stop requested by signal",
            stop_signal() ? " " + std::to_string(stop_signal()) : std::string(),
            " on some rank: checkpointing at step ", pos_.step, " and exiting for requeue");
  timer_.pause("checkpoint", pos_.step);
  settle(/*whole_weights=*/false);
  checkpoints_->save(pos_);  // nothing new when this step was just checkpointed
  checkpoints_->wait();
  s_->run_log->event("stopped",
                     {{"step", pos_.step}, {"exit_code", static_cast<int>(kExitRequeue)}});
  return kExitRequeue;
}

void Trainer::finish(nlohmann::json memory) {
  Session& s = *s_;
  const std::int64_t steady_steps = pos_.step - steady_.first_step - steady_.warmup_steps;
  const double steady_s = seconds_since(steady_.start) - steady_.paused_s;
  nlohmann::json steady_rate = nullptr;
  if (steady_steps > 0)
    steady_rate =
        steady_steps * cfg_.batch_size * cfg_.grad_accum * rt_.size() / std::max(steady_s, 1e-9);
  s.run_log->end_progress_line();
  timer_.pause("checkpoint", pos_.step);
  settle(/*whole_weights=*/false);
  checkpoints_->save_final(pos_);
  add_checkpoint_peak(memory, s);
  // The measured peak beside the plan: how far the start-up estimate was off on this run.
  log::info_rank0(
      "memory on rank 0: peak ", gigabytes(memory["peak_resident_bytes"]),
      " resident in training, planned ", gigabytes(s.memory_plan.total()),
      s.device.kind == "cuda" ? " (the plan counts the GPU's memory; the peak is the host's)" : "");
  nlohmann::json final_metrics = nullptr;
  if (s.final_split.empty()) {
    log::info_rank0(no_final_evaluation(s));
  } else {
    settle(/*whole_weights=*/!s.layer_gate);
    const eval::EvalOutcome o =
        run_evaluation(s, s.final_split, "final evaluation", pos_.step, true);
    if (o.ok) {
      final_metrics = o.metrics.to_json();
      final_metrics["confusion"] = o.metrics.confusion_json();
    }
  }
  nlohmann::json done = {
      {"step", pos_.step},
      {"samples_per_s", steady_rate},
      {"warmup_steps", steady_.warmup_steps},
      {"steady_steps", steady_steps},
      {"steady_seconds", steady_s},
      {"final_split", s.final_split.empty() ? nlohmann::json() : nlohmann::json(s.final_split)},
      {"final", final_metrics},
      {"checkpoint", checkpoints_->last_written()},
      {"memory", memory}};
  // "test" as before, for readers of the final test metrics.
  if (s.final_split == "test") done["test"] = final_metrics;
  s.run_log->event("done", done);
}

// A training collective that cannot complete, or ranks out of step, ends the job: every rank
// that can still act gets here within its deadline (or within the step, for a desync), reports,
// and MPI_Abort tears down the rest, including a hung rank.
void Trainer::abort_training(const Error& e) {
  if (s_ && s_->run_log) s_->run_log->end_progress_line();
  log::error("training cannot continue at step ", pos_.step, ": ", e.what());
  log::error(
      "ending the job (MPI_Abort); the last checkpoint is intact: resume with --resume auto");
  if (s_ && s_->run_log) s_->run_log->event("failed", {{"step", pos_.step}, {"reason", e.what()}});
  if (checkpoints_) checkpoints_->settle_before_abort();
  runtime::abort_job(kExitFailure, e.what());
}

int Trainer::run() {
  Resumed resumed;
  try {
    s_ = open_session(cfg_, rt_);
    const auto resume_from = Clock::now();
    resumed = resume_if_asked(*s_);
    pos_ = resumed.at;
    start_session(*s_, pos_, resumed.resumed, 1e3 * seconds_since(resume_from));
  } catch (const CommError& e) {
    // Failed before the loop (broadcasting the initial weights, say): peers may be gone.
    abort_training(e);
  }
  Session& s = *s_;
  // The checkpoint resumed from is already written: the step is never written twice.
  checkpoints_ = std::make_unique<Checkpointer>(s, resumed.resumed ? resumed.at.step : -1,
                                                resumed.best_metric);
  nonfinite_ = std::make_unique<NonfiniteSteps>(s);
  update_ = std::make_unique<StepUpdate>(s, *nonfinite_, rt_.hostnames());
  batches_ = std::make_unique<DeviceBatches>(*s.loader, s.info, s.torch_device);
  control_ = std::make_unique<StepControl>(*s.control, *s.data_plane, rt_.hostnames());
  stragglers_ = std::make_unique<StragglerWatch>(cfg_.straggler_threshold, cfg_.straggler_windows,
                                                 rt_.hostnames());
  steady_.first_step = pos_.step;
  steady_.warmup_steps = std::min(cfg_.log_every, (s.total_steps - pos_.step) / 2);
  s.startup_peak_resident_bytes = runtime::peak_resident_bytes();
  runtime::release_freed_memory();
  runtime::reset_peak_resident();
  try {
    while (pos_.step < s.total_steps) {
      batches_->start_epoch(pos_.epoch, pos_.epoch_step);
      timer_.enter(kData, pos_.step + 1);
      data::Batch batch;
      while (pos_.step < s.total_steps && !s.epoch_over(pos_.epoch_step) && batches_->next(batch)) {
        const std::int64_t step = pos_.step + 1;
        // A progress line after the launch's first step and at each epoch's end too (train
        // events stay every --log-every steps).
        const bool log_now = step % cfg_.log_every == 0 || step == s.total_steps ||
                             step == steady_.first_step + 1 || step % s.steps_per_epoch == 0;
        const StepDecision d = train_step(batch, log_now);
        after_step(d, log_now);
        if (nonfinite_->diverged()) return nonfinite_->end_run(*checkpoints_, pos_.step);
        if (d.stop) return stop_for_requeue();
      }
      if (s.epoch_over(pos_.epoch_step)) {
        ++pos_.epoch;
        pos_.epoch_step = 0;
      }
    }
    update_->settle();  // the device's last step, which may have been skipped
    if (nonfinite_->diverged()) return nonfinite_->end_run(*checkpoints_, pos_.step);
    finish(memory_report(s));
  } catch (const CommError& e) {
    abort_training(e);
  } catch (const CheckpointsFailed& e) {
    return checkpoints_failed(e);
  }
  return kExitOk;
}

}  // namespace

int run_training(const TrainConfig& config) {
  start_model_process(config.data, config.io_timeout_s);  // before MPI starts
  runtime::Runtime rt;
  // The trainer outlives the guard: a failing rank prints and aborts before any of its parts
  // (communicators, loader threads) is torn down.
  Trainer trainer(config, rt);
  return runtime::run_guarded(rt, [&] { return trainer.run(); });
}

}  // namespace slimtrain::train
