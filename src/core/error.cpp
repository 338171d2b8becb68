#include "slimtrain/core/error.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "slimtrain/core/log.hpp"

namespace slimtrain {
namespace {
std::atomic<int> g_rank{-1};

const char* basename_of(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}
}  // namespace

void set_process_rank(int rank) {
  g_rank.store(rank);
}
int process_rank() {
  return g_rank.load();
}
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::atoi(value);
  }
  return -1;
}
int log_rank() {
  const int rank = process_rank();
  if (rank >= 0) return rank;
  return std::max(0, launcher_rank());
}

Error::Error(std::string message, const char* file, int line)
    : std::runtime_error(std::move(message)), rank_(process_rank()), file_(file), line_(line) {}

std::string Error::describe() const {
  std::string out = "slimtrain: ";
  out += kind();
  if (rank_ >= 0) out += " on rank " + std::to_string(rank_);
  // Where it was thrown is for whoever debugs slimtrain, not for the user who reads the words.
  if (log::enabled(log::Level::debug))
    out += " (" + std::string(basename_of(file_)) + ":" + std::to_string(line_) + ")";
  out += ": ";
  out += what();
  return out;
}

std::string foreign_message(const std::exception& e) {
  const std::string text = e.what();
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (text.find_first_not_of(" \t\r", start) < end) {
      const bool more = text.find_first_not_of(" \t\r\n", end) != std::string::npos;
      if (more) log::debug("the whole message:\n", text);
      return text.substr(start, end - start) + (more ? " (more at --log-level debug)" : "");
    }
    start = end + 1;
  }
  return text;
}

TimeoutError::TimeoutError(std::string message, std::vector<int> missing_ranks, const char* file,
                           int line)
    : CommError(std::move(message), file, line), missing_ranks_(std::move(missing_ranks)) {}

}  // namespace slimtrain
