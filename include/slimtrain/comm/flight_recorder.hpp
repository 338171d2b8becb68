#pragma once
/**
 * @brief Ring buffer of a communicator's last operations, written to the log on a timeout so a
 * user sees on every rank which operation stopped where.
 */
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace slimtrain::comm {

enum class OpStatus { queued, running, done, timed_out, failed };
const char* to_string(OpStatus status);

/** @brief One recorded operation; times are seconds since the recorder was created (-1: not yet).
 */
struct FlightEntry {
  std::uint64_t seq = 0;
  std::string op;
  std::string dtype;
  std::size_t bytes = 0;
  std::string tag;
  double enqueued_s = -1.0;
  double started_s = -1.0;
  double ended_s = -1.0;
  OpStatus status = OpStatus::queued;
  /** @brief True once the caller gave up on it (the operation may still drain afterwards). */
  bool caller_timed_out = false;
};

class FlightRecorder {
 public:
  /** @brief Keeps the last `capacity` operations (at least one). */
  explicit FlightRecorder(std::size_t capacity);

  void enqueued(std::uint64_t seq, std::string op, std::string dtype, std::size_t bytes,
                std::string tag);
  void started(std::uint64_t seq);
  /** @brief status is done or failed. */
  void ended(std::uint64_t seq, OpStatus status);
  void caller_timed_out(std::uint64_t seq);

  /** @brief Recorded entries, oldest first. */
  std::vector<FlightEntry> snapshot() const;
  /** @brief One line per entry, for the log. */
  std::vector<std::string> format(const std::string& communicator) const;

 private:
  double now_s() const;
  FlightEntry* find(std::uint64_t seq);

  mutable std::mutex mutex_;
  std::vector<FlightEntry> ring_;
  std::uint64_t recorded_ = 0;
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace slimtrain::comm
