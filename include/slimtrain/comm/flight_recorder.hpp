#pragma once
/**
 * @brief Ring buffer of a communicator's last operations. On a timeout or desync each rank writes
 * its whole recorder to RUN_DIR/flight_recorder/rank-R.jsonl (one JSON object per operation, as
 * c10d dumps its own to a file) and the log gets only the last few operations and that path.
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
  /** @brief Operations recorded so far (more than the ring holds once it wrapped). */
  std::uint64_t recorded() const;

 private:
  double now_s() const;
  FlightEntry* find(std::uint64_t seq);

  mutable std::mutex mutex_;
  std::vector<FlightEntry> ring_;
  std::uint64_t recorded_ = 0;
  std::chrono::steady_clock::time_point origin_;
};

/**
 * @brief Where report_flight_recorder writes: `dir`/rank-`rank`.jsonl. The trainer sets
 * RUN_DIR/flight_recorder at start-up; unset (tools, tests), the log gets the last lines only.
 */
void set_flight_recorder_directory(const std::string& dir, int rank, const std::string& host);

/**
 * @brief On a failure: appends every entry to this rank's file (each line carries the
 * communicator, rank, host and the wall-clock time of the dump) and logs the last `shown`
 * operations and the file's path as WARN lines.
 */
void report_flight_recorder(const FlightRecorder& recorder, const std::string& communicator,
                            std::size_t shown = 5);

}  // namespace slimtrain::comm
