#pragma once
/** @brief The one clock deadlines and durations are measured with, and its two sums. */
#include <chrono>

namespace slimtrain {

using Clock = std::chrono::steady_clock;

/** @brief Seconds from `start` to now. */
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/** @brief The time point `seconds` from now. */
inline Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace slimtrain
