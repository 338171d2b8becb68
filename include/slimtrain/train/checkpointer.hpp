#pragma once
/**
 * @brief The trainer's checkpoints: assembled on rank 0 (replicas are identical) from a host copy,
 * written in the background, each step at most once, and every rank learns under the I/O
 * deadline whether the write landed before anyone goes on. The latest evaluation's value of
 * --best-metric goes with every checkpoint after it, so the best one is kept even when no
 * evaluation fell on a checkpoint step.
 */
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/eval/metrics.hpp"
#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

/** @brief The number --best-metric names in `m`. */
double metric_value(const eval::Metrics& m, const std::string& name);

class Checkpointer {
 public:
  /** @param written_step the step of a checkpoint that already exists (resumed from), or -1. */
  Checkpointer(Session& s, std::int64_t written_step);

  /** @brief Due on the step schedule (--checkpoint-every). */
  bool due_by_steps(std::int64_t step) const;
  /** @brief On rank 0: --checkpoint-minutes have passed since the last checkpoint. */
  bool due_by_clock() const;
  /** @brief Remembers the latest evaluation for best-of retention. */
  void note_evaluation(const eval::Metrics& metrics);

  /**
   * @brief Checkpoints `at` unless that step is already written: waits for the previous write
   * (and the agreement on it), copies the state to host memory, starts the write, logs the
   * checkpoint event. Collective.
   */
  void save(const Position& at);
  /** @brief Every rank learns whether the write in flight landed; throws CommError if not. */
  void wait();
  /**
   * @brief Before the job is aborted: on rank 0, lets a write in flight land (at most the I/O
   * deadline) so the job ends with its last checkpoint; elsewhere, gives rank 0 a few seconds to
   * do so and end the job first.
   */
  void settle_before_abort();
  /** @brief The newest complete checkpoint (rank 0; "" elsewhere or before any). */
  std::string last_written() const;

 private:
  Session& s_;
  ckpt::CheckpointManager manager_;
  std::optional<double> latest_metric_;
  nlohmann::json latest_metrics_;  ///< the latest evaluation, stored in each checkpoint's meta
  std::int64_t written_step_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace slimtrain::train
