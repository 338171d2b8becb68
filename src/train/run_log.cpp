#include "slimtrain/train/run_log.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

RunLog::RunLog(const std::string& run_dir, bool active, bool append)
    : active_(active), tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {
  if (!active_) return;
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  const std::string path = run_dir + "/metrics.jsonl";
  out_.open(path, append ? std::ios::app : std::ios::trunc);
  if (!out_) SLIMTRAIN_THROW(ConfigError, "--out: cannot write ", path);
}

void RunLog::event(const std::string& name, nlohmann::json fields) {
  if (!active_) return;
  nlohmann::json line = {{"event", name}};
  line.update(fields);
  line["time"] =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  out_ << line.dump() << '\n';
  out_.flush();
}

void RunLog::progress(std::int64_t epoch, std::int64_t step, std::int64_t total_steps, double loss,
                      double samples_per_s) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (first_step_ < 0) {
    first_step_ = step;
    start_ = now;
  }
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = step > first_step_ ? (step - first_step_) / std::max(elapsed, 1e-9) : 0.0;
  // The first line has no rate yet: say so rather than print a confident "ETA 0m00s".
  char eta[32] = "--";
  if (rate > 0) {
    const int s = static_cast<int>((total_steps - step) / rate);
    std::snprintf(eta, sizeof eta, "%dm%02ds", s / 60, s % 60);
  }
  char line[256];
  std::snprintf(line, sizeof line, "epoch %lld  step %lld/%lld  loss %.4f  %.0f samples/s  ETA %s",
                static_cast<long long>(epoch), static_cast<long long>(step),
                static_cast<long long>(total_steps), loss, samples_per_s, eta);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line);
    progress_open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

void RunLog::end_progress_line() {
  if (progress_open_) {
    std::fputc('\n', stderr);
    progress_open_ = false;
  }
}

}  // namespace slimtrain::train
