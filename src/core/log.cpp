#include "slimtrain/core/log.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>

namespace slimtrain::log {
namespace {
std::atomic<Level> g_level{Level::info};

const char* level_name(Level level) {
  switch (level) {
    case Level::debug:
      return "DEBUG";
    case Level::info:
      return "INFO ";
    case Level::warn:
      return "WARN ";
    case Level::error:
      return "ERROR";
    case Level::off:
      break;
  }
  return "?    ";
}
}  // namespace

Level parse_level(const std::string& text, const std::string& option) {
  if (text == "debug") return Level::debug;
  if (text == "info") return Level::info;
  if (text == "warn" || text == "warning") return Level::warn;
  if (text == "error") return Level::error;
  if (text == "off") return Level::off;
  SLIMTRAIN_THROW(ConfigError, option, ": '", text,
                  "' is not a log level (debug, info, warn, error, off)");
}

void set_level(Level level) {
  g_level.store(level);
}
Level level() {
  return g_level.load();
}
bool enabled(Level lvl) {
  return lvl >= g_level.load() && lvl != Level::off;
}

void write(Level lvl, const std::string& message) {
  using clock = std::chrono::system_clock;
  const auto now = clock::now();
  const std::time_t secs = clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);

  std::string line;
  line.reserve(message.size() + 48);
  line += stamp;
  line += '.';
  line += std::to_string(1000 + millis).substr(1);
  line += "Z ";
  line += "r" + std::to_string(log_rank());  // the launcher's rank before MPI starts
  line += ' ';
  line += level_name(lvl);
  line += ' ';
  line += message;
  line += '\n';
  // One write(2) per line: atomic for pipes up to PIPE_BUF and good enough for terminals and files.
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace slimtrain::log
