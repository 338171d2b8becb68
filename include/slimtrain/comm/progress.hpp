#pragma once
/**
 * @brief What a rank publishes for its peers' stall inquiries: each communicator's counters and
 * current operation (Progress), and what the rank is doing now (its activity: "evaluation" at
 * step 8, say). Cheap to update: every phase of a step does.
 */
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "slimtrain/comm/stall_report.hpp"

namespace slimtrain::comm {

/** @brief Counters and the current operation a communicator publishes for inquiries. */
class Progress {
 public:
  std::atomic<std::uint64_t> issued{0};
  std::atomic<std::uint64_t> completed{0};

  /** @brief The operation the communicator is running (or waiting on) now. */
  void set_current(std::uint64_t seq, OpKind kind, std::uint64_t bytes, const char* tag);
  /** @brief Clears the current operation if it is still `seq`. */
  void clear_current(std::uint64_t seq);
  OpSummary current() const;

 private:
  mutable std::mutex mutex_;
  OpSummary current_;
};

/** @brief Characters of a tag the reports carry (longer tags are cut). */
inline constexpr std::size_t kTagChars = 15;
/** @brief Characters of an activity the reports carry. */
inline constexpr std::size_t kActivityChars = 23;

/**
 * @brief What this rank is doing now ("forward", "evaluation", "checkpoint write"), answered to
 * peers' stall inquiries with the training step (-1: none). Cheap: call it at every phase.
 */
void set_activity(const char* what, std::int64_t step);

/** @brief The activity set last, and its step. */
struct Activity {
  std::string what;
  std::int64_t step = -1;
};
Activity current_activity();

}  // namespace slimtrain::comm
