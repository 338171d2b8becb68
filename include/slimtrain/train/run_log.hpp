#pragma once
/**
 * @brief RUN_DIR/metrics.jsonl (one JSON object per line, with an "event" field) and the
 * rank-0 progress line, which updates in place on a terminal and prints plain lines otherwise.
 *
 * The log survives a full disk: an event that cannot be written (ENOSPC, EIO) is kept in memory,
 * up to kKeptBytes, and written, in order, with the next event once the file takes bytes again;
 * events past that bound are counted as lost. Both are said on stderr once per episode, and
 * training goes on: the run's record is worth less than the run.
 */
#include <chrono>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>

namespace slimtrain::train {

class RunLog {
 public:
  /** @param active false on ranks other than 0: every call is then a no-op. */
  RunLog(const std::string& run_dir, bool active, bool append);
  /** @brief Writes what is still kept, if the file takes it; says so on stderr otherwise. */
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;
  void event(const std::string& name, nlohmann::json fields);
  /** @brief The progress line (at the run's first step, every --log-every steps and at each
   * epoch's end, which it says). */
  void progress(std::int64_t epoch, std::int64_t step, std::int64_t total_steps, double loss,
                double samples_per_s);
  /**
   * @brief What the log's last line needs: optimizer steps per epoch, samples per step (all
   * ranks), and the step this launch starts from. The done event then also prints a line: the
   * steps trained, the total time of the launch and its throughput, and the final evaluation.
   */
  void set_run_shape(std::int64_t steps_per_epoch, std::int64_t samples_per_step,
                     std::int64_t first_step);
  /** @brief Ends an in-place progress line before other output. */
  void end_progress_line();
  /** @brief Events waiting for the disk, and those dropped past kKeptBytes. */
  std::size_t kept() const { return kept_.size(); }
  std::uint64_t lost() const { return lost_; }
  /** @brief Bytes of unwritten events kept in memory at most. */
  static constexpr std::size_t kKeptBytes = 16u << 20;
  /**
   * @brief Test only (SLIMTRAIN_INJECT phase=log): writes fail as on a full disk from the first
   * event whose step is at least `step`, for `attempts` write attempts (< 0: always).
   */
  void fail_writes_for_testing(std::int64_t step, std::int64_t attempts);

 private:
  bool active_;
  bool tty_;
  bool progress_open_ = false;
  /** @brief Writes the kept lines in order; false (and errno) when the file takes no more. */
  bool drain();

  int fd_ = -1;
  std::deque<std::string> kept_;  ///< whole lines not yet written, the first maybe in part
  std::size_t kept_bytes_ = 0;
  std::size_t first_written_ = 0;  ///< bytes of kept_.front() already in the file
  std::uint64_t lost_ = 0, lost_said_ = 0;
  bool failing_ = false;
  std::int64_t fail_from_step_ = -1, fail_attempts_ = 0;
  bool fail_armed_ = false;
  /** @brief The done event's line on stderr. */
  void summarise(const nlohmann::json& done) const;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point created_;
  std::int64_t first_step_ = -1;
  std::int64_t steps_per_epoch_ = 0, samples_per_step_ = 0, launch_step_ = 0;
};

}  // namespace slimtrain::train
