#include "slimtrain/train/checkpointer.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "slimtrain/ckpt/optimizer_shards.hpp"
#include "slimtrain/ckpt/rank_files.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/comm/progress.hpp"
#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/train/optimizer_state.hpp"
#include "slimtrain/train/weight_shards.hpp"

namespace slimtrain::train {
namespace {

// The CPU generator's state (nothing in training draws from it today; a model with dropout would),
// so a resumed run draws the same numbers as an uninterrupted one.
std::string cpu_rng_state() {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  const torch::Tensor t = gen.get_state().contiguous();
  return std::string(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.nbytes()));
}

std::string first_nonfinite(const std::vector<ckpt::TensorEntry>& tensors) {
  for (const ckpt::TensorEntry& e : tensors)
    if (e.tensor.is_floating_point() && !all_finite(e.tensor)) return e.name;
  return "";
}

// Seconds the peers wait for rank 0 past the I/O deadline it gives a write: room for it to give
// up on a hung write and say so in the agreement, instead of the peers timing out first.
constexpr double kSettleMarginS = 10.0;
// Seconds between tries of a final checkpoint whose write failed.
constexpr double kFinalRetryS = 5.0;

}  // namespace

Checkpointer::Checkpointer(Session& s, std::int64_t written_step, std::optional<double> best)
    : s_(s),
      manager_(s.cfg.out, retention(s.cfg)),
      evaluations_(s.cfg, best),
      written_step_(written_step) {
  if (s.fault.phase == FaultPhase::checkpoint && s.rt.rank() == 0) {
    // Test only: a slow file system under the background write of one step.
    manager_.set_write_hook_for_testing([plan = s.fault](const ckpt::CheckpointState& st) mutable {
      if (plan.armed(0, FaultPhase::checkpoint, st.step)) plan.fire();
    });
  }
}

Checkpointer::~Checkpointer() = default;

void Checkpointer::start_shard_write(std::int64_t step) {
  ckpt::FlatOptimizerState state =
      flat_state(*s_.optimizer, s_.cfg.optim.name, s_.optimizer_spans());
  // --shard parameters: this rank's weights too, which the writer makes tensors.bin from.
  std::optional<ckpt::FlatOptimizerState> weights;
  if (s_.shards && !s_.shards->holds_weights()) weights = weight_pieces(*s_.shards);
  shard_write_ = std::make_shared<ShardWrite>();
  // Test only: a hung file system (phase=checkpoint,action=hang) hangs this file too. Counted
  // here, on the plan that lasts, so times=N holds across checkpoints.
  std::optional<FaultPlan> hang;
  if (s_.fault.action == FaultAction::hang &&
      s_.fault.armed(s_.rt.rank(), FaultPhase::checkpoint, step)) {
    hang = s_.fault;
    ++s_.fault.fired;
  }
  std::thread([shared = shard_write_, dir = manager_.checkpoints_dir(), step, hang,
               name = ckpt::shard_file_name(s_.rt.rank()), state = std::move(state),
               weights_name = ckpt::weights_file_name(s_.rt.rank()),
               weights = std::move(weights)]() mutable {
    std::exception_ptr error;
    try {
      if (hang) hang->fire();
      if (weights)  // first: the writer waits for it before anything else
        ckpt::stage_rank_file(dir, step, weights_name, [&weights](files::DurableFile& out) {
          ckpt::write_shard(out, *weights);
        });
      ckpt::stage_rank_file(dir, step, name,
                            [&state](files::DurableFile& out) { ckpt::write_shard(out, state); });
    } catch (const std::exception& e) {
      error = std::current_exception();
      // Said now: the ranks agree on it only at the next checkpoint, which a job that dies
      // meanwhile never reaches, and then the log would not say why steps since were lost.
      log::warn("checkpoint of step ", step, ": writing ", name, " failed: ", e.what(),
                " (every rank learns of it at the next checkpoint)");
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->error = error;
    shared->done = true;
    shared->finished.notify_all();
  }).detach();
}

nlohmann::json Checkpointer::shard_meta(int writers) const {
  nlohmann::json files = nlohmann::json::array();
  for (int r = 0; r < writers; ++r) {
    nlohmann::json ranges = nlohmann::json::array();
    if (s_.shards) {
      for (const ShardPiece& p : s_.layout->shard(r))
        if (p.logical.length > 0) ranges.push_back({p.logical.start, p.logical.length});
    } else {
      for (const OptimizedSpan& span : s_.optimizer_spans())
        ranges.push_back({span.logical.start, span.logical.length});
    }
    files.push_back({{"file", ckpt::shard_file_name(r)}, {"ranges", ranges}});
  }
  return {{"optimizer", s_.cfg.optim.name},
          {"shard", to_string(s_.shard)},
          {"world_size", s_.rt.size()},
          {"elements", s_.layout->numel()},
          {"files", files}};
}

bool Checkpointer::due_by_steps(std::int64_t step) const {
  return s_.cfg.checkpoint_every > 0 && step % s_.cfg.checkpoint_every == 0;
}

bool Checkpointer::due_by_clock() const {
  return s_.rt.rank() == 0 && s_.cfg.checkpoint_minutes > 0 &&
         seconds_since(last_) >= s_.cfg.checkpoint_minutes * 60.0;
}

bool Checkpointer::note_evaluation(const eval::Metrics& metrics, std::int64_t step) {
  return evaluations_.note(metrics, step);
}

void Checkpointer::wait(bool final) {
  comm::set_activity("checkpoint wait", -1);
  std::exception_ptr failure;
  // Each rank gives up on a write that outlasts the I/O deadline (a hung file system: a failed
  // write) a little before its peers would give up on it in the agreement below.
  const double io_deadline = s_.io_deadline(s_.checkpoint_bytes_estimate());
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(io_deadline));
  if (const std::shared_ptr<ShardWrite> shard = std::exchange(shard_write_, nullptr)) {
    std::unique_lock<std::mutex> lock(shard->mutex);
    if (!shard->finished.wait_until(lock, until, [&] { return shard->done; })) {
      failure = std::make_exception_ptr(Error(
          detail::concat("writing its optimizer shard has not finished on rank ", s_.rt.rank(),
                         " after ", io_deadline, " s (--io-timeout); ", ckpt::kWriteAbandoned),
          __FILE__, __LINE__));
    } else if (shard->error) {
      try {
        std::rethrow_exception(shard->error);
      } catch (const std::exception& e) {
        failure = std::make_exception_ptr(
            Error(detail::concat("writing its optimizer shard failed on rank ", s_.rt.rank(), ": ",
                                 e.what()),
                  __FILE__, __LINE__));
      }
    }
  }
  if (s_.rt.rank() == 0) {
    try {
      manager_.wait(std::max(0.0, std::chrono::duration<double>(until - Clock::now()).count()));
    } catch (const std::exception& e) {
      // The optimizer file's failure, when there is one, came first and says more.
      if (!failure)
        failure = std::make_exception_ptr(
            Error(detail::concat("writing the checkpoint failed on rank 0: ", e.what()), __FILE__,
                  __LINE__));
    }
  }
  // A slow file system delays rank 0 here: the others wait with the I/O deadline, not the
  // collective one. Every rank then throws rank 0's failure, its message included.
  comm::OpOptions io;
  io.timeout_s = io_deadline + kSettleMarginS;
  io.tag = "checkpoint-landed";
  const std::int64_t step = in_flight_;
  in_flight_ = -1;
  try {
    comm::agree_or_throw(*s_.control, failure, io);
  } catch (const CommError&) {
    throw;  // the agreement itself: a peer is gone, which ends the job
  } catch (const Error& e) {
    // A failed write, the same on every rank (agree_or_throw gives every rank the lowest failing
    // rank's message). Its checkpoint directory was never renamed into place.
    failed_write(e, final);
    return;
  }
  if (step >= 0) failed_in_a_row_ = 0;
  if (final && failed_in_a_row_ > 0)
    failed_write(
        Error("an earlier checkpoint write failed and none has landed since", __FILE__, __LINE__),
        true);
}

void Checkpointer::failed_write(const Error& e, bool final) {
  ++failed_in_a_row_;
  const std::string latest = last_written();
  s_.run_log->end_progress_line();
  s_.run_log->event("checkpoint_failed",
                    {{"reason", e.what()}, {"in_a_row", failed_in_a_row_}, {"latest", latest}});
  const std::string limit =
      detail::concat(failed_in_a_row_, " failed in a row; --max-failed-checkpoints ",
                     s_.cfg.max_failed_checkpoints);
  // A write that failed (a full disk) is tried again; one given up after the I/O deadline (a hung
  // file system) is not: each try would wait that long again. Every rank has the same message.
  const bool abandoned = std::string(e.what()).find(ckpt::kWriteAbandoned) != std::string::npos;
  if (final && final_tries_left_ > 0 && !abandoned) {
    // Said on the first try and then once a minute: the tries can last --io-timeout.
    const int every = static_cast<int>(60.0 / kFinalRetryS);
    if (s_.rt.rank() == 0 && (final_try_ == 1 || final_try_ % every == 0))
      log::warn("the final checkpoint could not be written: ", e.what(), "; trying again every ",
                kFinalRetryS, " s (", final_tries_left_, " tries left, until --io-timeout)");
    if (s_.rt.rank() == 0 && final_try_ == 1)
      log::info("the run itself is done; only its final checkpoint is waiting for the disk");
    return;
  }
  if (final || failed_in_a_row_ >= s_.cfg.max_failed_checkpoints)
    throw CheckpointsFailed(
        detail::concat(final ? "the final checkpoint could not be written: "
                             : "checkpoints keep failing (" + limit + "): ",
                       e.what(), "; the latest checkpoint is ",
                       latest.empty() ? std::string("none (rank 0 knows it)") : latest),
        __FILE__, __LINE__);
  if (s_.rt.rank() == 0)
    log::warn("checkpoint not written: ", e.what(), " (", limit,
              "); training goes on, the previous checkpoint stays the latest (",
              latest.empty() ? std::string("none yet") : latest,
              "), and the next is tried at the next interval");
}

void Checkpointer::save_final(const Position& at) {
  // The same count on every rank: the deadline is computed from the same figures everywhere.
  const double deadline = s_.io_deadline(s_.checkpoint_bytes_estimate());
  const int tries = 1 + static_cast<int>(deadline / kFinalRetryS);
  for (int t = 1; t <= tries; ++t) {
    final_try_ = t;
    final_tries_left_ = tries - t;
    save(at);
    wait(/*final=*/true);
    if (failed_in_a_row_ == 0) break;  // landed (or this step had landed already)
    written_step_ = -1;                // the same step again
    std::this_thread::sleep_for(std::chrono::duration<double>(kFinalRetryS));
  }
  final_try_ = 0;
  final_tries_left_ = 0;
}

void Checkpointer::save(const Position& at) {
  if (at.step == written_step_) return;  // never the same step twice
  // Training is blocked from here until save_async returns: waiting for the previous write, the
  // agreement on it, and the host copy. The write itself runs in the background.
  const auto blocked_from = Clock::now();
  wait();
  const double waited_ms = 1e3 * seconds_since(blocked_from);
  comm::set_activity("checkpoint copy", at.step);
  // Only the weights an evaluation saw carry its metric: a later step's weights are not them.
  const std::optional<double> metric = evaluations_.metric_at(at.step);
  // The optimizer state by element: every rank's shard with --shard, else rank 0's whole state.
  const int writers = s_.shards ? s_.rt.size() : 1;
  if (s_.rt.rank() < writers) start_shard_write(at.step);
  // --shard parameters: every rank staged its pieces of the weights; rank 0's writer makes
  // tensors.bin from them, tensor by tensor, so that no rank holds the model whole.
  const bool weights_staged = s_.shards && !s_.shards->holds_weights();
  std::string nonfinite;  // rank 0: the tensor that kept this checkpoint from being written
  if (weights_staged) nonfinite = nonfinite_pieces(*s_.shards, *s_.control);
  if (s_.rt.rank() == 0) {
    ckpt::CheckpointState state;
    state.step = at.step;
    state.epoch = at.epoch;
    state.epoch_step = at.epoch_step;
    state.meta = {{"model", s_.spec.to_json()},
                  {"fingerprint", s_.spec.fingerprint()},
                  {"seed", s_.cfg.seed},
                  {"world_size", s_.rt.size()},
                  {"batch_size", s_.cfg.batch_size},
                  {"data", s_.cfg.data},
                  {"metrics", evaluations_.metrics_at(at.step)},
                  {"class_names", s_.info.class_names}};
    evaluations_.record_in(state.meta);
    if (s_.fault.armed(0, FaultPhase::copy, at.step)) s_.fault.fire();  // test only
    // --weights bf16: the float32 masters, from which a resume continues exactly.
    const auto copy = [&] {
      if (weights_staged) {
        state.tensors = entries_from_weight_files(*s_.model, s_.model->trainable_parameters(),
                                                  *s_.layout, writers);
      } else if (!s_.lora_base.is_null()) {
        // --lora: what trains; the frozen base stays in the model the record names.
        state.tensors =
            ckpt::host_copy(*s_.model, "model/", {}, ckpt::frozen_parameter_names(*s_.model));
        state.meta["lora_base"] = s_.lora_base;
        nonfinite = first_nonfinite(state.tensors);
      } else {
        state.tensors = ckpt::host_copy(*s_.model, "model/");
        nonfinite = first_nonfinite(state.tensors);
      }
    };
    if (s_.masters)
      s_.masters->as_float32(copy);
    else
      copy();
    if (nonfinite.empty()) {
      state.meta["optimizer_shards"] = shard_meta(writers);
      for (int r = 0; r < writers; ++r) state.rank_files.push_back(ckpt::shard_file_name(r));
      if (weights_staged)
        for (int r = 0; r < writers; ++r) state.source_files.push_back(ckpt::weights_file_name(r));
      state.rank_files_timeout_s = s_.io_deadline(s_.checkpoint_bytes_estimate());
      state.blobs["rng"] = cpu_rng_state();
      manager_.save_async(std::move(state), metric);
    }
  }
  // Rank 0's host copy (and, without --shard, the optimizer's serialisation) of a large model can
  // take longer than a collective deadline: the peers wait for it here, under the I/O deadline,
  // instead of in the next step's control reduction.
  comm::OpOptions copied;
  copied.timeout_s = s_.io_deadline(s_.checkpoint_bytes_estimate());
  copied.tag = "checkpoint-copied";
  comm::agree_or_throw(*s_.control, nullptr, copied);
  in_flight_ = at.step;  // on every rank alike (rank 0 alone knows of a skipped write)
  written_step_ = at.step;
  last_ = Clock::now();
  if (!nonfinite.empty()) {
    // Replicas are identical: rank 0 speaks for all. The previous checkpoint stays the latest.
    log::warn("checkpoint at step ", at.step, " not written: ", nonfinite,
              " holds NaN or infinite values; the latest checkpoint stays ",
              last_written().empty() ? std::string("none") : last_written());
    s_.run_log->event("checkpoint_skipped", {{"step", at.step}, {"nonfinite_tensor", nonfinite}});
    return;
  }
  s_.run_log->event("checkpoint",
                    {{"step", at.step},
                     {"epoch", at.epoch},
                     {"blocking_ms", 1e3 * seconds_since(blocked_from)},
                     {"waited_ms", waited_ms},
                     {"metric", metric ? nlohmann::json(*metric) : nlohmann::json()}});
}

void Checkpointer::settle_before_abort() {
  // Seconds every rank waits for rank 0 to end the job with its checkpoint landed: rank 0 no
  // longer than the others, whose MPI_Abort after this long ends it anyway.
  constexpr double kPeerGraceSeconds = 5.0;
  const double limit = kPeerGraceSeconds;
  const auto until = after(limit);
  while (Clock::now() < until && (s_.rt.rank() != 0 || manager_.busy()))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string Checkpointer::last_written() const {
  return manager_.last_written();
}

}  // namespace slimtrain::train
