#pragma once
/**
 * @brief Test-only fault injection, off unless SLIMTRAIN_INJECT is set. Never set it in
 * production.
 *
 * SLIMTRAIN_INJECT="rank=1,phase=eval,step=200,delay=8s" delays rank 1's evaluation at step 200.
 * Phases: train (a training step; step N is the step being computed), eval (an evaluation at
 * step N; in `slimtrain eval`, step 0 is before the checkpoint is resolved), prep (`slimtrain
 * prep`, step 0: inside the collective HDF5 write), checkpoint (rank 0's background write of the
 * checkpoint of step N: a slow file system), read (the training loader's prefetch thread before
 * it hands over its N-th batch of the run, counted from 0: a stalled read; hang or delay only),
 * copy (rank 0's host copy of the checkpoint of step N, before its write: a large model; delay).
 * Actions:
 *   delay=D       sleep D (8s, 500ms, 2m); every time the rank reaches that step and phase
 *                 (every attempt of an evaluation with --eval-retries) unless times=N limits it
 *   action=hang   stop arriving at collectives from that step on (phase=checkpoint: the
 *                 write hangs; times=N writes at most, as a file system that comes back)
 *   action=exit   exit abruptly (a dead rank)
 *   action=throw  throw a DataError there, as a corrupt row in the stream reader would
 *   action=desync (train) issue one extra data-plane all-reduce of bytes=B (default 4 MiB,
 *                 tagged "injected") before the step's gradient buckets: ranks out of step
 *   action=slow   (train, with delay=D) sleep D in every step from that step on, charged to
 *                 the step's data phase: a straggler (a slow disk or a busy node), logged once
 *   action=nan    (train) that rank's loss at that step is NaN, as a diverging batch makes it
 *   action=full   (checkpoint) the write of that step's checkpoint and of every later one fails
 *                 as on a full disk (ENOSPC), times=N of them at most: space comes back after;
 *                 (log) rank 0's writes to metrics.jsonl fail alike from the first event of that
 *                 step on, times=N attempts at most
 */
#include <cstdint>
#include <string>

namespace slimtrain {

enum class FaultPhase { none, train, eval, prep, checkpoint, log, read, copy };
enum class FaultAction { delay, hang, exit, fail, desync, slow, nan, full };

struct FaultPlan {
  int rank = -1;
  FaultPhase phase = FaultPhase::none;
  std::int64_t step = -1;
  FaultAction action = FaultAction::delay;
  double delay_s = 0.0;
  std::int64_t times = -1;  ///< delay, full, checkpoint hang: at most this often (< 0: always)
  std::int64_t desync_bytes = 4 << 20;  ///< desync only: size of the extra all-reduce
  std::int64_t fired = 0;

  /** @brief Parses `spec`; ConfigError naming SLIMTRAIN_INJECT and the bad field. */
  static FaultPlan parse(const std::string& spec);
  /** @brief The plan from the environment, or an empty plan. */
  static FaultPlan from_env();
  bool armed(int rank, FaultPhase phase, std::int64_t step) const;
  /**
   * @brief Logs (so tests can see it fired), then sleeps, hangs forever, exits or throws, as
   * planned. For desync it only logs: the caller issues the extra operation.
   */
  void fire();
  std::string describe() const;
};

}  // namespace slimtrain
