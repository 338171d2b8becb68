#include "slimtrain/train/trainer.hpp"

#include <malloc.h>
#include <mpi.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>

#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/comm/tensor_ops.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/train_loader.hpp"
#include "slimtrain/eval/evaluator.hpp"
#include "slimtrain/eval/shard_pass.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/fault_injection.hpp"
#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/run_log.hpp"
#include "slimtrain/train/stop_signal.hpp"

namespace slimtrain::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

model::ModelSpec model_spec(const TrainConfig& c, const data::DatasetInfo& info) {
  model::ModelSpec spec;
  spec.name = c.model;
  spec.input_shape = info.input_shape();
  spec.num_classes = info.num_classes;
  spec.mlp_widths = c.mlp_widths;
  spec.vit_patch = c.vit_patch;
  spec.vit_dim = c.vit_dim;
  spec.vit_depth = c.vit_depth;
  spec.vit_heads = c.vit_heads;
  spec.label_smoothing = c.label_smoothing;
  return spec;
}

// Rank 0 decides (one view of the file system), every rank learns the answer.
std::string broadcast_string(comm::Communicator& comm, const std::string& text) {
  std::int64_t length = static_cast<std::int64_t>(text.size());
  comm.broadcast(&length, 1, comm::DType::i64, 0);
  std::vector<std::int64_t> chars(static_cast<std::size_t>(length));
  for (std::size_t i = 0; comm.rank() == 0 && i < chars.size(); ++i)
    chars[i] = static_cast<unsigned char>(text[i]);
  comm.broadcast(chars.data(), chars.size(), comm::DType::i64, 0);
  std::string out(chars.size(), '\0');
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<char>(chars[i]);
  return out;
}

// A training collective that cannot complete ends the job: every surviving rank gets here
// within its deadline, reports, and MPI_Abort tears down the rest (including a hung rank).
[[noreturn]] void abort_job(const Error& e, RunLog& run_log, std::int64_t step) {
  run_log.end_progress_line();
  log::error("training cannot continue at step ", step, ": ", e.what());
  log::error(
      "ending the job (MPI_Abort); the last checkpoint is intact: resume with --resume auto");
  run_log.event("failed", {{"step", step}, {"reason", e.what()}});
  MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  std::_Exit(kExitFailure);
}

// The number --best-metric names; higher is better for all but loss (handled by retention).
double metric_value(const eval::Metrics& m, const std::string& name) {
  if (name == "macro_f1") return m.macro_f1;
  if (name == "loss") return m.mean_loss;
  return m.accuracy;
}

// The CPU generator's state (nothing in training draws from it today; a model with dropout would),
// so a resumed run draws the same numbers as an uninterrupted one.
std::string cpu_rng_state() {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  const torch::Tensor t = gen.get_state().contiguous();
  return std::string(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.nbytes()));
}

void set_cpu_rng_state(const std::string& bytes, const std::string& checkpoint) {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  if (bytes.size() != static_cast<std::size_t>(gen.get_state().nbytes()))
    SLIMTRAIN_THROW(DataError, "--resume: checkpoint ", checkpoint, " holds a CPU RNG state of ",
                    bytes.size(), " bytes; this LibTorch's is ", gen.get_state().nbytes());
  torch::Tensor t = torch::empty({static_cast<std::int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  gen.set_state(t);
}

// Where a step's time goes, summed over a log window (the train event's step_ms).
enum Phase { kData, kForward, kBackward, kSync, kOptimizer, kPhases };
constexpr const char* kPhaseNames[kPhases] = {"data", "forward", "backward", "sync", "optimizer"};

// glibc hands the freed activation buffers of each step back to the kernel and faults them in
// again on the next one (about 8000 page faults per cnn-small step, a fifth of the step time).
// Keeping freed memory in the heap costs nothing beyond the step's peak, which stays resident.
void keep_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

struct Position {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  std::int64_t epoch_step = 0;
};

class Trainer {
 public:
  explicit Trainer(const TrainConfig& config) : cfg_(config) {}
  int run();

 private:
  void setup();
  void resume_if_asked();
  void train_step(const data::Batch& batch);
  eval::EvalOutcome run_eval(const std::string& split, const char* purpose);
  void checkpoint(std::optional<double> metric);
  void wait_for_checkpoint();
  nlohmann::json outcome_json(const eval::EvalOutcome& o) const;

  const TrainConfig& cfg_;
  std::unique_ptr<runtime::Runtime> rt_;
  runtime::DeviceBinding device_;
  torch::Device device_torch_{torch::kCPU};
  data::DatasetInfo info_;
  model::ModelSpec spec_;
  std::shared_ptr<model::ClassifierImpl> model_;
  std::unique_ptr<comm::Communicator> train_comm_, eval_comm_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<LrSchedule> schedule_;
  std::unique_ptr<data::TrainLoader> loader_;
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<ckpt::CheckpointManager> checkpoints_;
  std::unique_ptr<RunLog> run_log_;
  FaultPlan fault_;
  Position pos_;
  std::int64_t total_steps_ = 0;
  std::string eval_split_;
  nlohmann::json last_metrics_;
  bool resumed_ = false;
  double last_loss_ = 0.0;
  std::array<double, kPhases> phase_s_{};
};

void Trainer::setup() {
  keep_freed_memory();
  rt_ = std::make_unique<runtime::Runtime>();
  install_stop_handlers();
  fault_ = FaultPlan::from_env();
  device_ = runtime::bind_device(*rt_, cfg_.device, cfg_.threads);
  info_ = data::read_dataset_info(cfg_.data);
  if (!info_.has_split("train"))
    SLIMTRAIN_THROW(DataError, cfg_.data, ": no /train split to train on");
  eval_split_ =
      cfg_.eval_split.empty() ? (info_.has_split("val") ? "val" : "test") : cfg_.eval_split;
  if (!info_.has_split(eval_split_))
    SLIMTRAIN_THROW(ConfigError, "--eval-split: ", cfg_.data, " has no split '", eval_split_, "'");

  spec_ = model_spec(cfg_, info_);
  torch::manual_seed(cfg_.seed);
  model_ = model::make_model(spec_);
  device_torch_ = device_.kind == "cuda"
                      ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_.index))
                      : torch::Device(torch::kCPU);
  model_->to(device_torch_);

  comm::CommConfig cc;
  cc.deadline.base_s = cfg_.collective_timeout_s;
  cc.deadline.floor_bytes_per_s = cfg_.floor_bandwidth_mbps * 1e6;
  cc.chunk_bytes = cfg_.chunk_bytes;
  // Separate communicators: a skipped evaluation can never desynchronise training collectives.
  train_comm_ = comm::make_communicator(*rt_, "train", device_.kind, cc);
  eval_comm_ = comm::make_communicator(*rt_, "eval", device_.kind, cc);

  {
    torch::NoGradGuard no_grad;
    for (auto& p : model_->parameters()) {
      torch::Tensor t = p.detach();
      comm::broadcast(*train_comm_, t, 0);
    }
    for (auto& b : model_->buffers()) comm::broadcast(*train_comm_, b, 0);
  }

  optimizer_ = make_optimizer(cfg_.optim, model_->parameters());
  data::LoaderOptions lo;
  lo.batch_size = cfg_.batch_size;
  lo.seed = cfg_.seed;
  lo.mode = cfg_.data_mode;
  lo.memory_budget_bytes = static_cast<std::size_t>(cfg_.memory_budget_mb) << 20;
  loader_ = std::make_unique<data::TrainLoader>(cfg_.data, "train", rt_->rank(), rt_->size(), lo);
  if (loader_->steps_per_epoch() == 0)
    SLIMTRAIN_THROW(ConfigError, "--batch-size: ", cfg_.batch_size, " x ", rt_->size(),
                    " ranks exceeds the ", info_.split_size("train"),
                    " training samples: not one step per epoch");
  total_steps_ = cfg_.max_steps > 0 ? cfg_.max_steps : cfg_.epochs * loader_->steps_per_epoch();
  ScheduleConfig sc = cfg_.schedule;
  sc.total_steps = total_steps_;
  schedule_ = std::make_unique<LrSchedule>(cfg_.optim.lr, sc);

  ckpt::RetentionPolicy retention;
  retention.keep_last = cfg_.keep_last;
  retention.best_metric = cfg_.best_metric;
  checkpoints_ = std::make_unique<ckpt::CheckpointManager>(cfg_.out, retention);
  const auto resume_from = Clock::now();
  resume_if_asked();
  const double resume_ms = 1e3 * seconds_since(resume_from);

  run_log_ = std::make_unique<RunLog>(cfg_.out, rt_->rank() == 0, resumed_);
  std::vector<torch::Tensor> params = model_->parameters();
  sync_ = std::make_unique<GradientSync>(params, *train_comm_, cfg_.bucket_bytes,
                                         cfg_.overlap != "off");
  OverlapChoice overlap{cfg_.overlap == "on", "--overlap " + cfg_.overlap};
  if (cfg_.overlap == "auto") {
    overlap = choose_overlap(sync_->bucket_count(), device_.kind == "cuda", device_.cores,
                             device_.threads);
    // Ranks bound differently (mixed hosts) still choose one way together.
    const bool mine = overlap.on;
    overlap.on = train_comm_->agree(mine);
    if (mine && !overlap.on) overlap.reason = "a rank without a spare core chose off";
    overlap.reason = "--overlap auto: " + overlap.reason;
    if (!overlap.on)
      sync_ = std::make_unique<GradientSync>(params, *train_comm_, cfg_.bucket_bytes, false);
  }

  const std::int64_t n_params = model::parameter_count(*model_);
  log::info_rank0("model ", spec_.describe(), ": ", n_params, " parameters");
  log::info_rank0("data ", cfg_.data, ": ", info_.split_size("train"), " train samples, ",
                  rt_->size(), " ranks x batch ", cfg_.batch_size, ", ", loader_->steps_per_epoch(),
                  " steps/epoch (", loader_->mode(), " mode), ", total_steps_,
                  " steps; evaluating on '", eval_split_, "'");
  log::info_rank0("device ", device_.describe(), "; gradient buckets: ", sync_->bucket_count(),
                  " (overlap ", overlap.on ? "on" : "off", "; ", overlap.reason, ")");
  if (fault_.phase != FaultPhase::none)
    log::warn("SLIMTRAIN_INJECT is set (test only): ", fault_.describe());
  run_log_->event("start", {{"model", spec_.to_json()},
                            {"parameters", n_params},
                            {"world_size", rt_->size()},
                            {"batch_size", cfg_.batch_size},
                            {"total_steps", total_steps_},
                            {"resumed_at_step", pos_.step},
                            {"resume_ms", resume_ms}});
}

void Trainer::resume_if_asked() {
  std::string path;
  if (cfg_.resume == "auto") {
    if (rt_->rank() == 0) path = ckpt::CheckpointManager::find_latest_valid(cfg_.out).value_or("");
    path = broadcast_string(*train_comm_, path);
  } else if (cfg_.resume != "none") {
    // A run directory (or its checkpoints/) means its newest valid checkpoint, as for eval; every
    // rank resolves it, so a bad path fails everywhere with exit 2 instead of a broadcast timeout.
    path = ckpt::CheckpointManager::resolve(cfg_.resume, "--resume");
  }
  if (path.empty()) return;
  ckpt::CheckpointState state = ckpt::CheckpointManager::load(path);
  const std::string theirs = state.meta.value("fingerprint", std::string());
  if (theirs != spec_.fingerprint()) {
    const std::string what =
        state.meta.contains("model") ? state.meta["model"].dump() : std::string("unknown");
    SLIMTRAIN_THROW(ConfigError, "--resume: checkpoint ", path, " was written for model ", what,
                    " but this run builds ", spec_.to_json().dump(),
                    "; use --resume none or a matching --model/--data");
  }
  ckpt::load_into(*model_, state);
  auto blob = state.blobs.find("optimizer");
  if (blob != state.blobs.end()) ckpt::deserialize_optimizer(*optimizer_, blob->second);
  blob = state.blobs.find("rng");
  if (blob != state.blobs.end()) set_cpu_rng_state(blob->second, path);
  pos_.step = state.step;
  pos_.epoch = state.epoch;
  pos_.epoch_step = state.epoch_step;
  const int their_world = state.meta.value("world_size", rt_->size());
  if (their_world != rt_->size()) {
    // Keep the epoch and the samples already seen in it; the order of the rest changes.
    const std::int64_t seen =
        state.epoch_step * their_world * state.meta.value("batch_size", cfg_.batch_size);
    pos_.epoch_step = seen / (static_cast<std::int64_t>(rt_->size()) * cfg_.batch_size);
    log::warn("resuming a ", their_world, "-rank checkpoint on ", rt_->size(),
              " ranks: the data order from here on differs from an uninterrupted run");
  }
  if (pos_.epoch_step >= loader_->steps_per_epoch()) {
    ++pos_.epoch;
    pos_.epoch_step = 0;
  }
  resumed_ = true;
  log::info_rank0("resumed from ", path, " at step ", pos_.step, " (epoch ", pos_.epoch, ", step ",
                  pos_.epoch_step, " in epoch)");
}

void Trainer::train_step(const data::Batch& batch) {
  if (fault_.armed(rt_->rank(), FaultPhase::train, pos_.step + 1)) fault_.fire();
  auto lap_from = Clock::now();
  auto lap = [&](Phase phase) {
    const auto now = Clock::now();
    phase_s_[phase] += std::chrono::duration<double>(now - lap_from).count();
    lap_from = now;
  };
  set_learning_rate(*optimizer_, schedule_->lr_at(pos_.step));
  sync_->prepare();  // clears .grad: no zero_grad(), which would only zero the buckets
  lap(kOptimizer);
  model::Output out = model_->forward(batch.x.to(device_torch_), batch.y.to(device_torch_));
  lap(kForward);
  out.loss.backward();
  lap(kBackward);
  sync_->finish();
  lap(kSync);
  if (cfg_.clip_grad_norm > 0)
    torch::nn::utils::clip_grad_norm_(model_->parameters(), cfg_.clip_grad_norm);
  optimizer_->step();
  last_loss_ = out.loss.item<double>();
  lap(kOptimizer);
  ++pos_.step;
  ++pos_.epoch_step;
}

eval::EvalOutcome Trainer::run_eval(const std::string& split, const char* purpose) {
  const std::int64_t at_step = pos_.step;
  auto local_pass = [&](std::int64_t batch_size) {
    if (fault_.armed(rt_->rank(), FaultPhase::eval, at_step)) fault_.fire();
    return eval::evaluate_shard(*model_, cfg_.data, split, rt_->rank(), rt_->size(), batch_size,
                                info_.num_classes);
  };
  eval::EvalPolicy policy;
  policy.deadline_s = cfg_.eval_deadline_s;
  policy.agree_timeout_s = cfg_.collective_timeout_s + cfg_.eval_deadline_s;
  policy.retries = cfg_.eval_retries;
  eval::EvalOutcome o = eval::evaluate(local_pass, *eval_comm_, info_.num_classes,
                                       info_.class_names, cfg_.eval_batch_size, policy);
  run_log_->end_progress_line();
  if (o.ok) {
    log::info_rank0(purpose, " on '", split, "' at step ", at_step, ": ", o.metrics.summary());
    nlohmann::json fields = o.metrics.to_json();
    fields["step"] = at_step;
    fields["split"] = split;
    fields["bytes_sent"] = o.bytes_sent;
    // A retried evaluation shows how many attempts it took and the batch that succeeded.
    fields["attempts"] = o.attempts;
    fields["eval_batch_size"] = o.batch_size;
    run_log_->event("eval", fields);
    last_metrics_ = o.metrics.to_json();
  } else {
    log::warn(purpose, " on '", split, "' at step ", at_step, " skipped on every rank: ", o.reason);
    run_log_->event("eval_skipped", {{"step", at_step},
                                     {"split", split},
                                     {"reason", o.reason},
                                     {"late_ranks", o.late_ranks},
                                     {"attempts", o.attempts}});
  }
  return o;
}

void Trainer::wait_for_checkpoint() {
  std::string problem;
  if (rt_->rank() == 0) {
    try {
      checkpoints_->wait();
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  // Every rank learns whether the write landed before anyone goes on.
  if (!train_comm_->agree(problem.empty()))
    SLIMTRAIN_THROW(CommError, "writing the checkpoint failed on rank 0",
                    problem.empty() ? "" : ": ", problem, "; the previous checkpoint is intact");
}

void Trainer::checkpoint(std::optional<double> metric) {
  // Training is blocked from here until save_async returns: waiting for the previous write, the
  // agreement on it, and the host copy. The write itself runs in the background.
  const auto blocked_from = Clock::now();
  wait_for_checkpoint();
  const double waited_ms = 1e3 * seconds_since(blocked_from);
  if (rt_->rank() == 0) {
    ckpt::CheckpointState state;
    state.step = pos_.step;
    state.epoch = pos_.epoch;
    state.epoch_step = pos_.epoch_step;
    state.meta = {
        {"model", spec_.to_json()},  {"fingerprint", spec_.fingerprint()}, {"seed", cfg_.seed},
        {"world_size", rt_->size()}, {"batch_size", cfg_.batch_size},      {"data", cfg_.data},
        {"metrics", last_metrics_},  {"class_names", info_.class_names}};
    state.tensors = ckpt::host_copy(*model_);
    state.blobs["optimizer"] = ckpt::serialize_optimizer(*optimizer_);
    state.blobs["rng"] = cpu_rng_state();
    checkpoints_->save_async(std::move(state), metric);
  }
  run_log_->event("checkpoint", {{"step", pos_.step},
                                 {"epoch", pos_.epoch},
                                 {"blocking_ms", 1e3 * seconds_since(blocked_from)},
                                 {"waited_ms", waited_ms}});
}

nlohmann::json Trainer::outcome_json(const eval::EvalOutcome& o) const {
  if (!o.ok) return nullptr;
  return o.metrics.to_json();
}

int Trainer::run() {
  setup();
  const std::int64_t steps_per_epoch = loader_->steps_per_epoch();
  auto last_checkpoint = Clock::now();
  auto window_start = Clock::now();
  std::int64_t window_steps = 0;
  // Steady state for the done event: the steps after a warm-up of one log window (at most half
  // of this launch's steps), without the time of evaluations and checkpoints.
  const std::int64_t first_step = pos_.step;
  const std::int64_t warmup_steps = std::min(cfg_.log_every, (total_steps_ - first_step) / 2);
  auto steady_start = Clock::now();
  double paused_s = 0.0;
  int exit_code = kExitOk;
  try {
    while (pos_.step < total_steps_ && exit_code == kExitOk) {
      loader_->start_epoch(pos_.epoch, pos_.epoch_step);
      data::Batch batch;
      auto fetch_from = Clock::now();
      while (pos_.step < total_steps_ && loader_->next(batch)) {
        phase_s_[kData] += seconds_since(fetch_from);
        train_step(batch);
        ++window_steps;
        if (pos_.step == first_step + warmup_steps) {
          steady_start = Clock::now();
          paused_s = 0.0;
        }
        const bool log_now = pos_.step % cfg_.log_every == 0 || pos_.step == total_steps_;
        if (log_now) {
          torch::Tensor loss = torch::tensor({last_loss_}, torch::kFloat64);
          comm::all_reduce(*train_comm_, loss, comm::ReduceOp::avg);
          const double window_s = std::max(seconds_since(window_start), 1e-9);
          const double rate = window_steps * cfg_.batch_size * rt_->size() / window_s;
          // Rank 0's components; its sync includes waiting for the slowest rank.
          nlohmann::json step_ms = {{"total", 1e3 * window_s / window_steps}};
          for (int p = 0; p < kPhases; ++p)
            step_ms[kPhaseNames[p]] = 1e3 * phase_s_[p] / window_steps;
          run_log_->progress(pos_.epoch, pos_.step, total_steps_, loss.item<double>(), rate);
          run_log_->event("train", {{"step", pos_.step},
                                    {"epoch", pos_.epoch},
                                    {"loss", loss.item<double>()},
                                    {"lr", schedule_->lr_at(pos_.step - 1)},
                                    {"samples_per_s", rate},
                                    {"step_ms", step_ms}});
          window_start = Clock::now();
          window_steps = 0;
          phase_s_.fill(0.0);
        }
        std::optional<double> metric;
        const bool eval_now =
            cfg_.eval_every > 0 && pos_.step % cfg_.eval_every == 0 && pos_.step < total_steps_;
        const auto paused_from = Clock::now();
        if (eval_now) {
          eval::EvalOutcome o = run_eval(eval_split_, "evaluation");
          if (o.ok) metric = metric_value(o.metrics, cfg_.best_metric);
          window_start = Clock::now();
          window_steps = 0;
          phase_s_.fill(0.0);
        }
        // Written whether or not the evaluation at this step ran.
        bool checkpoint_now = cfg_.checkpoint_every > 0 && pos_.step % cfg_.checkpoint_every == 0;
        if (cfg_.checkpoint_minutes > 0) {
          // Rank 0's clock decides, so all ranks checkpoint at the same step.
          std::int64_t due =
              rt_->rank() == 0 && seconds_since(last_checkpoint) >= cfg_.checkpoint_minutes * 60.0;
          train_comm_->broadcast(&due, 1, comm::DType::i64, 0);
          checkpoint_now = checkpoint_now || due;
        }
        if (checkpoint_now && pos_.step < total_steps_) {
          checkpoint(metric);
          last_checkpoint = Clock::now();
        }
        paused_s += seconds_since(paused_from);
        if (!train_comm_->agree(stop_signal() == 0)) {
          run_log_->end_progress_line();
          log::warn("stop requested by signal",
                    stop_signal() ? " " + std::to_string(stop_signal()) : std::string(),
                    " on some rank: checkpointing at step ", pos_.step, " and exiting for requeue");
          checkpoint(std::nullopt);
          wait_for_checkpoint();
          run_log_->event("stopped",
                          {{"step", pos_.step}, {"exit_code", static_cast<int>(kExitRequeue)}});
          exit_code = kExitRequeue;
          break;
        }
        fetch_from = Clock::now();
      }
      if (exit_code != kExitOk) break;
      if (pos_.epoch_step >= steps_per_epoch) {
        ++pos_.epoch;
        pos_.epoch_step = 0;
      }
    }
    if (exit_code == kExitOk) {
      const std::int64_t steady_steps = pos_.step - first_step - warmup_steps;
      const double steady_s = seconds_since(steady_start) - paused_s;
      nlohmann::json steady_rate = nullptr;
      if (steady_steps > 0)
        steady_rate = steady_steps * cfg_.batch_size * rt_->size() / std::max(steady_s, 1e-9);
      run_log_->end_progress_line();
      checkpoint(std::nullopt);
      wait_for_checkpoint();
      eval::EvalOutcome final_eval = run_eval("test", "final test evaluation");
      run_log_->event("done", {{"step", pos_.step},
                               {"samples_per_s", steady_rate},
                               {"warmup_steps", warmup_steps},
                               {"steady_steps", steady_steps},
                               {"steady_seconds", steady_s},
                               {"test", outcome_json(final_eval)},
                               {"checkpoint",
                                rt_->rank() == 0 ? checkpoints_->last_written() : std::string()}});
    }
  } catch (const TimeoutError& e) {
    abort_job(e, *run_log_, pos_.step);
  } catch (const CommError& e) {
    abort_job(e, *run_log_, pos_.step);
  }
  return exit_code;
}

}  // namespace

int run_training(const TrainConfig& config) {
  Trainer trainer(config);
  try {
    return trainer.run();
  } catch (const CommError& e) {
    // Failed before the loop (e.g. broadcasting the initial weights): MPI_Finalize could wait for
    // a rank that is gone, so the job ends here instead.
    log::error(e.describe());
    MPI_Abort(MPI_COMM_WORLD, kExitFailure);
    std::_Exit(kExitFailure);
  }
}

}  // namespace slimtrain::train
