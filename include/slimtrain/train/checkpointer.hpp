#pragma once
/**
 * @brief The trainer's checkpoints: assembled on rank 0 (replicas are identical) from a host copy,
 * written in the background, each step at most once; the optimizer state by element
 * (ckpt/optimizer_shards.hpp), written by every rank that holds a shard of it, in parallel,
 * into files of the same checkpoint (ckpt/rank_files.hpp); and every rank learns under the I/O
 * deadline whether the write landed before anyone goes on. A checkpoint carries the value of
 * --best-metric only when it holds the weights that evaluation saw (an evaluation at its step),
 * and, with --best-metric set, an evaluation that sets a new best is checkpointed at its own step,
 * so the best checkpoint kept is one that was evaluated.
 */
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/eval/metrics.hpp"
#include "slimtrain/train/best_evaluation.hpp"
#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

/**
 * @brief Checkpoint writes failed --max-failed-checkpoints times in a row, or the final one did:
 * thrown on every rank alike, so the job ends with exit 1 without an abort.
 */
class CheckpointsFailed : public Error {
 public:
  using Error::Error;
  const char* kind() const override { return "checkpoint error"; }
};

class Checkpointer {
 public:
  /**
   * @param written_step the step of a checkpoint that already exists (resumed from), or -1.
   * @param best the best value of --best-metric so far (from the resumed checkpoint), if any.
   */
  Checkpointer(Session& s, std::int64_t written_step, std::optional<double> best);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  /** @brief Due on the step schedule (--checkpoint-every). */
  bool due_by_steps(std::int64_t step) const;
  /** @brief On rank 0: --checkpoint-minutes have passed since the last checkpoint. */
  bool due_by_clock() const;
  /**
   * @brief Remembers the evaluation at `step` for best-of retention. True when it is a new best,
   * --best-metric is set and checkpoints are written during training (--checkpoint-every or
   * --checkpoint-minutes): the caller then checkpoints this step. Every rank answers alike (the
   * metrics are reduced).
   */
  bool note_evaluation(const eval::Metrics& metrics, std::int64_t step);

  /**
   * @brief Checkpoints `at` unless that step is already written: waits for the previous write
   * (and the agreement on it), copies the state to host memory, starts the write, logs the
   * checkpoint event. Collective.
   */
  void save(const Position& at);
  /**
   * @brief Every rank learns whether the write in flight landed. A failed write is a warning and a
   * `checkpoint_failed` event (the previous checkpoint stays the latest); CheckpointsFailed after
   * --max-failed-checkpoints in a row, or for any failure when `final`. CommError when the
   * agreement itself fails (a peer is gone).
   */
  void wait(bool final = false);
  /**
   * @brief The run's last checkpoint: save and wait. A write that fails (a full disk) is tried
   * again every few seconds until the I/O deadline has passed, then CheckpointsFailed (at once
   * for a write given up after the I/O deadline, a hung file system, as before): a disk
   * often frees up, and ending at once sends a job script's restarts back over the last interval
   * onto the same disk. Every rank makes the same number of tries (each is agreed). Collective.
   */
  void save_final(const Position& at);
  /**
   * @brief Before the job is aborted: on rank 0, lets a write in flight land (at most the I/O
   * deadline) so the job ends with its last checkpoint; elsewhere, gives rank 0 a few seconds to
   * do so and end the job first.
   */
  void settle_before_abort();
  /** @brief The newest complete checkpoint (rank 0; "" elsewhere or before any). */
  std::string last_written() const;

 private:
  /** @brief This rank's optimizer state, copied now and written on a thread of its own. */
  void start_shard_write(std::int64_t step);
  /** @brief Rank 0: what the checkpoint's meta says of the optimizer files. */
  nlohmann::json shard_meta(int writers) const;

  /** @brief Every rank alike: counts the failure, warns, throws CheckpointsFailed past the limit.
   */
  void failed_write(const Error& e, bool final);

  Session& s_;
  std::int64_t in_flight_ = -1;  ///< the step whose write is in flight, or -1
  int failed_in_a_row_ = 0;      ///< checkpoint writes that failed in a row
  int final_try_ = 0;            ///< save_final: this try, from 1 (0 outside it)
  int final_tries_left_ = 0;     ///< save_final: tries after this one (a failure then only warns)
  // This rank's optimizer file of the checkpoint in flight, written by a detached thread that
  // holds only this state: a wait that gives up on it (a hung file system) leaves it behind.
  struct ShardWrite {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::exception_ptr error;
  };
  std::shared_ptr<ShardWrite> shard_write_;
  ckpt::CheckpointManager manager_;
  BestEvaluation evaluations_;
  std::int64_t written_step_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace slimtrain::train
