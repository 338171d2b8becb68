#include "slimtrain/train/step_timer.hpp"

#include <algorithm>

#include "slimtrain/comm/progress.hpp"

namespace slimtrain::train {
namespace {
constexpr const char* kPhaseNames[kPhases] = {"data", "forward", "backward", "sync", "optimizer"};
}

const char* phase_name(int phase) {
  return kPhaseNames[phase];
}

StepTimer::StepTimer() : lap_from_(Clock::now()), window_start_(lap_from_) {}

void StepTimer::enter(Phase phase, std::int64_t step) {
  const auto now = Clock::now();
  if (running_) phase_s_[phase_] += std::chrono::duration<double>(now - lap_from_).count();
  lap_from_ = now;
  phase_ = phase;
  running_ = true;
  comm::set_activity(kPhaseNames[phase], step);
}

void StepTimer::pause(const char* activity, std::int64_t step) {
  const auto now = Clock::now();
  if (running_) phase_s_[phase_] += std::chrono::duration<double>(now - lap_from_).count();
  lap_from_ = now;
  running_ = false;
  comm::set_activity(activity, step);
}

double StepTimer::window_seconds() const {
  return std::max(std::chrono::duration<double>(Clock::now() - window_start_).count(), 1e-9);
}

nlohmann::json StepTimer::step_ms() const {
  const double steps = static_cast<double>(std::max<std::int64_t>(window_steps_, 1));
  nlohmann::json out = {{"total", 1e3 * window_seconds() / steps}};
  for (int p = 0; p < kPhases; ++p) out[kPhaseNames[p]] = 1e3 * phase_s_[p] / steps;
  return out;
}

std::array<double, kPhases> StepTimer::phase_ms() const {
  const double steps = static_cast<double>(std::max<std::int64_t>(window_steps_, 1));
  std::array<double, kPhases> out{};
  for (int p = 0; p < kPhases; ++p) out[static_cast<std::size_t>(p)] = 1e3 * phase_s_[p] / steps;
  return out;
}

void StepTimer::reset_window() {
  window_start_ = Clock::now();
  lap_from_ = window_start_;  // the running phase's earlier time belongs to the old window
  window_steps_ = 0;
  phase_s_.fill(0.0);
}

}  // namespace slimtrain::train
