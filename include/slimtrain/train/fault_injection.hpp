#pragma once
/**
 * @brief Test-only fault injection, off unless SLIMTRAIN_INJECT is set.
 *
 * SLIMTRAIN_INJECT="rank=1,phase=eval,step=200,delay=8s" delays rank 1's evaluation at step 200;
 * phase=train with action=hang makes the rank stop arriving at training collectives from that
 * step on, action=exit makes it exit abruptly (a dead rank). A delay fires every time the rank
 * reaches that step and phase (every attempt of an evaluation with --eval-retries) unless
 * times=N limits it to the first N, e.g. times=1 for one late attempt that a retry recovers
 * from. Never set it in production.
 */
#include <cstdint>
#include <string>

namespace slimtrain::train {

enum class FaultPhase { none, train, eval };
enum class FaultAction { delay, hang, exit };

struct FaultPlan {
  int rank = -1;
  FaultPhase phase = FaultPhase::none;
  std::int64_t step = -1;
  FaultAction action = FaultAction::delay;
  double delay_s = 0.0;
  std::int64_t times = -1;  ///< delay only: fire at most this often (< 0: every time)
  std::int64_t fired = 0;

  /** @brief Parses `spec`; ConfigError naming SLIMTRAIN_INJECT and the bad field. */
  static FaultPlan parse(const std::string& spec);
  /** @brief The plan from the environment, or an empty plan. */
  static FaultPlan from_env();
  bool armed(int rank, FaultPhase phase, std::int64_t step) const;
  /** @brief Sleeps, hangs forever or exits, as planned; logs first so tests can see it fired. */
  void fire();
  std::string describe() const;
};

}  // namespace slimtrain::train
