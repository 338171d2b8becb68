#pragma once
/** @brief Learning-rate schedules: linear warmup, then constant, cosine or step decay. */
#include <cstdint>
#include <string>

namespace slimtrain::train {

/** @brief Schedule options; the trainer fills them from --lr-schedule, --warmup-steps, ... */
struct ScheduleConfig {
  std::string kind = "cosine";  ///< constant | cosine | step
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 1;  ///< cosine reaches min_lr at this step
  double min_lr_ratio = 0.0;     ///< cosine floor, as a fraction of the base rate
  std::int64_t step_every = 1000;
  double step_gamma = 0.1;
};

/**
 * @brief The learning rate as a pure function of the global step (0-based), so a resumed run
 * continues on the same curve.
 *
 * Warmup: lr = base * (step + 1) / warmup_steps for step < warmup_steps. After warmup, with
 * s = step - warmup_steps and n = total_steps - warmup_steps:
 * constant: base; cosine: min + (base - min) * (1 + cos(pi * min(s, n) / n)) / 2 with
 * min = base * min_lr_ratio; step: base * step_gamma^floor(s / step_every).
 */
class LrSchedule {
 public:
  /** @brief ConfigError naming the option (--lr, --lr-schedule, --warmup-steps, --min-lr-ratio,
   * --lr-step-every, --lr-step-gamma) for a bad value. */
  LrSchedule(double base_lr, const ScheduleConfig& config);
  double lr_at(std::int64_t step) const;
  double base_lr() const { return base_lr_; }
  const ScheduleConfig& config() const { return config_; }

 private:
  double base_lr_;
  ScheduleConfig config_;
};

}  // namespace slimtrain::train
