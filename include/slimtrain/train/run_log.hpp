#pragma once
/**
 * @brief RUN_DIR/metrics.jsonl (one JSON object per line, with an "event" field) and the
 * rank-0 progress line, which updates in place on a terminal and prints plain lines otherwise.
 */
#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace slimtrain::train {

class RunLog {
 public:
  /** @param active false on ranks other than 0: every call is then a no-op. */
  RunLog(const std::string& run_dir, bool active, bool append);
  void event(const std::string& name, nlohmann::json fields);
  void progress(std::int64_t epoch, std::int64_t step, std::int64_t total_steps, double loss,
                double samples_per_s);
  /** @brief Ends an in-place progress line before other output. */
  void end_progress_line();

 private:
  bool active_;
  bool tty_;
  bool progress_open_ = false;
  std::ofstream out_;
  std::chrono::steady_clock::time_point start_;
  std::int64_t first_step_ = -1;
};

}  // namespace slimtrain::train
