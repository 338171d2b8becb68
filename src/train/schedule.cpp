#include "slimtrain/train/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

LrSchedule::LrSchedule(double base_lr, const ScheduleConfig& config)
    : base_lr_(base_lr), config_(config) {
  if (!(base_lr > 0 && std::isfinite(base_lr))) {
    SLIMTRAIN_THROW(ConfigError, "--lr: ", base_lr, " must be a positive number");
  }
  const auto& k = config.kind;
  if (k != "constant" && k != "cosine" && k != "step") {
    SLIMTRAIN_THROW(ConfigError, "--lr-schedule: unknown schedule '", k,
                    "' (choose constant, cosine or step)");
  }
  if (config.warmup_steps < 0) {
    SLIMTRAIN_THROW(ConfigError, "--warmup-steps: ", config.warmup_steps, " must be >= 0");
  }
  if (config.total_steps < 1) {
    SLIMTRAIN_THROW(ConfigError, "the schedule needs at least one step, got ", config.total_steps,
                    " (check --epochs / --steps)");
  }
  if (!(config.min_lr_ratio >= 0 && config.min_lr_ratio <= 1)) {
    SLIMTRAIN_THROW(ConfigError, "--min-lr-ratio: ", config.min_lr_ratio, " is outside [0, 1]");
  }
  if (config.step_every < 1) {
    SLIMTRAIN_THROW(ConfigError, "--lr-step-every: ", config.step_every, " must be >= 1");
  }
  if (!(config.step_gamma > 0 && config.step_gamma <= 1)) {
    SLIMTRAIN_THROW(ConfigError, "--lr-step-gamma: ", config.step_gamma, " is outside (0, 1]");
  }
}

double LrSchedule::lr_at(std::int64_t step) const {
  step = std::max<std::int64_t>(step, 0);
  const auto warmup = config_.warmup_steps;
  if (step < warmup) return base_lr_ * double(step + 1) / double(warmup);
  const auto s = step - warmup;
  if (config_.kind == "cosine") {
    const auto n = std::max<std::int64_t>(config_.total_steps - warmup, 1);
    const double progress = double(std::min(s, n)) / double(n);
    const double floor_lr = base_lr_ * config_.min_lr_ratio;
    return floor_lr + (base_lr_ - floor_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  if (config_.kind == "step") {
    return base_lr_ * std::pow(config_.step_gamma, double(s / config_.step_every));
  }
  return base_lr_;
}

}  // namespace slimtrain::train
