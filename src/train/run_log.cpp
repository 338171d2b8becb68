#include "slimtrain/train/run_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "slimtrain/core/detail/fixed.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::train {

RunLog::RunLog(const std::string& run_dir, bool active, bool append)
    : active_(active),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      created_(start_) {
  if (!active_) return;
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  const std::string path = run_dir + "/metrics.jsonl";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd_ < 0)
    SLIMTRAIN_THROW(ConfigError, "--out: cannot write ", path, ": ", std::strerror(errno));
}

RunLog::~RunLog() {
  if (fd_ < 0) return;
  if (!kept_.empty() && !drain())
    std::fprintf(stderr, "slimtrain: metrics.jsonl: %zu event(s) could not be written: %s\n",
                 kept_.size(), std::strerror(errno));
  ::close(fd_);
}

void RunLog::fail_writes_for_testing(std::int64_t step, std::int64_t attempts) {
  fail_from_step_ = step;
  fail_attempts_ = attempts;
}

bool RunLog::drain() {
  while (!kept_.empty()) {
    const std::string& line = kept_.front();
    if (fail_armed_ && fail_attempts_ != 0) {  // test only: a full disk
      if (fail_attempts_ > 0) --fail_attempts_;
      errno = ENOSPC;
      return false;
    }
    const ssize_t n = ::write(fd_, line.data() + first_written_, line.size() - first_written_);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    first_written_ += static_cast<std::size_t>(n);
    if (first_written_ < line.size()) continue;
    kept_bytes_ -= line.size();
    kept_.pop_front();
    first_written_ = 0;
  }
  return true;
}

void RunLog::event(const std::string& name, nlohmann::json fields) {
  if (!active_) return;
  nlohmann::json line = {{"event", name}};
  line.update(fields);
  line["time"] =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // The test fault arms at the first event of its step (most events carry one).
  if (fail_from_step_ >= 0 && line.contains("step") && line["step"].is_number_integer() &&
      line["step"].get<std::int64_t>() >= fail_from_step_)
    fail_armed_ = true;
  std::string text = line.dump() + '\n';
  // The bound is for a disk that stays full: an event of any size is written when nothing
  // waits before it (a 4,000-class evaluation is a large line, not a full disk).
  if (!kept_.empty() && kept_bytes_ + text.size() > kKeptBytes) {
    ++lost_;
  } else {
    kept_bytes_ += text.size();
    kept_.push_back(std::move(text));
  }
  const bool written = drain();
  if (!written && !failing_) {
    failing_ = true;
    end_progress_line();
    std::fprintf(stderr,
                 "slimtrain: WARN metrics.jsonl: cannot write (%s): events are kept in memory "
                 "(up to %zu MiB) and written once the file takes them again; training goes on\n",
                 std::strerror(errno), kKeptBytes >> 20);
  } else if (written && failing_) {
    failing_ = false;
    std::fprintf(stderr, "slimtrain: metrics.jsonl: written again, the kept events included%s\n",
                 lost_ > lost_said_ ? "; some were lost (see below)" : "");
  }
  if (name == "done") summarise(line);
  if (lost_ > lost_said_ && (written || lost_said_ == 0)) {
    std::fprintf(stderr,
                 "slimtrain: WARN metrics.jsonl: %llu event(s) lost: the disk stayed full "
                 "past %zu MiB of kept events\n",
                 static_cast<unsigned long long>(lost_), kKeptBytes >> 20);
    lost_said_ = lost_;
  }
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
  const bool epoch_end = steps_per_epoch_ > 0 && step % steps_per_epoch_ == 0;
  std::snprintf(
      line, sizeof line, "epoch %lld%s  step %lld/%lld  loss %.4f  %.0f samples/s  ETA %s",
      static_cast<long long>(epoch), epoch_end ? " done" : "", static_cast<long long>(step),
      static_cast<long long>(total_steps), loss, samples_per_s, eta);
  if (epoch_end && tty_) {  // an epoch's line stays on the terminal
    std::fprintf(stderr, "\r\033[K%s\n", line);
    progress_open_ = false;
    std::fflush(stderr);
    return;
  }
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line);
    progress_open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

void RunLog::set_run_shape(std::int64_t steps_per_epoch, std::int64_t samples_per_step,
                           std::int64_t first_step) {
  steps_per_epoch_ = steps_per_epoch;
  samples_per_step_ = samples_per_step;
  launch_step_ = first_step;
}

void RunLog::summarise(const nlohmann::json& done) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - created_).count();
  const std::int64_t step = done.value("step", std::int64_t{0});
  const std::int64_t steps = step - launch_step_;
  const auto minutes = static_cast<long long>(seconds / 60);
  char time[64];
  std::snprintf(time, sizeof time, "%lldm%04.1fs", minutes, seconds - 60.0 * minutes);
  std::string text = detail::concat("done at step ", step, ": ", steps, " step",
                                    steps == 1 ? "" : "s", " trained in ", time);
  std::string rates;  // this launch's samples over its time, and the steady rate of the done event
  if (steps > 0 && seconds > 0 && samples_per_step_ > 0)
    rates = detail::fixed(static_cast<double>(steps * samples_per_step_) / seconds, 1) +
            " samples/s in all";
  const nlohmann::json& steady = done.contains("samples_per_s") ? done["samples_per_s"] : nullptr;
  if (steady.is_number())
    rates += (rates.empty() ? "" : ", ") + detail::fixed(steady.get<double>(), 1) + " steady";
  if (!rates.empty()) text += " (" + rates + ")";
  const nlohmann::json& final = done.contains("final") ? done["final"] : nullptr;
  if (final.is_object() && final.contains("accuracy"))
    text += detail::concat("; final evaluation on '", done.value("final_split", std::string()),
                           "': accuracy ", detail::fixed(final["accuracy"].get<double>(), 4),
                           ", macro-F1 ", detail::fixed(final.value("macro_f1", 0.0), 4));
  log::info(text);
}

void RunLog::end_progress_line() {
  if (progress_open_) {
    std::fputc('\n', stderr);
    progress_open_ = false;
  }
}

}  // namespace slimtrain::train
