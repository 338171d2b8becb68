#pragma once
/**
 * @brief Rank-prefixed, timestamped, level-filtered logging to stderr.
 *
 * One line per call, written with a single write so lines from threads and ranks do not
 * interleave mid-line: `2026-11-22T05:01:02.123Z r1 WARN  eval skipped at step 200`.
 */
#include <string>

#include "slimtrain/core/detail/concat.hpp"

namespace slimtrain::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

/** @brief Parses debug|info|warn|error|off; throws ConfigError naming `option` otherwise. */
Level parse_level(const std::string& text, const std::string& option = "--log-level");
void set_level(Level level);
Level level();
bool enabled(Level level);

/** @brief Writes one formatted line if `level` passes the filter. */
void write(Level level, const std::string& message);

template <typename... Args>
void debug(const Args&... args) {
  if (enabled(Level::debug)) write(Level::debug, detail::concat(args...));
}
template <typename... Args>
void info(const Args&... args) {
  if (enabled(Level::info)) write(Level::info, detail::concat(args...));
}
template <typename... Args>
void warn(const Args&... args) {
  if (enabled(Level::warn)) write(Level::warn, detail::concat(args...));
}
template <typename... Args>
void error(const Args&... args) {
  if (enabled(Level::error)) write(Level::error, detail::concat(args...));
}

/** @brief info() on rank 0 only (before MPI starts, the launcher's rank 0, or a process alone):
 * for messages every rank would repeat. */
template <typename... Args>
void info_rank0(const Args&... args);

}  // namespace slimtrain::log

#include "slimtrain/core/error.hpp"

template <typename... Args>
void slimtrain::log::info_rank0(const Args&... args) {
  if (log_rank() == 0) info(args...);
}
