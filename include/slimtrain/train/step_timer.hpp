#pragma once
/**
 * @brief Where a step's time goes, summed over a log window (the train event's step_ms), and
 * what this rank is doing now: every phase change also tells the stall inspector, so a peer's
 * timeout report says "forward at step 57" rather than only "late".
 */
#include <array>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace slimtrain::train {

enum Phase { kData, kForward, kBackward, kSync, kOptimizer, kPhases };
/** @brief "data", "forward", ...: the keys of step_ms and the activity a stall report names. */
const char* phase_name(int phase);

class StepTimer {
 public:
  StepTimer();
  /** @brief Charges the time since the last call to the current phase and enters `phase`. */
  void enter(Phase phase, std::int64_t step);
  /** @brief Leaves the phases (evaluation, checkpoint follow); their time is not a step's. */
  void pause(const char* activity, std::int64_t step);
  void count_step() { ++window_steps_; }

  std::int64_t window_steps() const { return window_steps_; }
  double window_seconds() const;
  /** @brief {"total": ms per step, "data": ..., "forward": ..., ...} over the window. */
  nlohmann::json step_ms() const;
  /** @brief The same per phase (data, forward, backward, sync, optimizer), without the total. */
  std::array<double, kPhases> phase_ms() const;
  /** @brief Starts a new window (after logging, or after a pause that should not count). */
  void reset_window();

 private:
  using Clock = std::chrono::steady_clock;
  std::array<double, kPhases> phase_s_{};
  Phase phase_ = kData;
  bool running_ = false;
  Clock::time_point lap_from_;
  Clock::time_point window_start_;
  std::int64_t window_steps_ = 0;
};

}  // namespace slimtrain::train
