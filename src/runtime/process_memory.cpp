#include "slimtrain/runtime/process_memory.hpp"

#include <algorithm>
#include <fstream>
#include <string>

namespace slimtrain::runtime {
namespace {

// "VmRSS:     123456 kB" -> bytes; 0 when the field is missing.
std::uint64_t status_field(const std::string& name, const char* file = "/proc/self/status") {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, name.size() + 1, name + ":") != 0) continue;
    try {
      return static_cast<std::uint64_t>(std::stoull(line.substr(name.size() + 1))) * 1024;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

std::uint64_t resident_bytes() {
  return status_field("VmRSS");
}

std::uint64_t peak_resident_bytes() {
  return status_field("VmHWM");
}

namespace {
// A cgroup v2 file's one number ("max" or missing: 0).
std::uint64_t cgroup_value(const std::string& name) {
  std::ifstream in("/sys/fs/cgroup/" + name);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return 0;
  }
}
}  // namespace

std::uint64_t available_memory_bytes() {
  std::uint64_t available = status_field("MemAvailable", "/proc/meminfo");
  // Under Slurm (or a container) the job's cgroup may allow less than the host has free.
  const std::uint64_t limit = cgroup_value("memory.max"), used = cgroup_value("memory.current");
  if (limit > 0) available = std::min(available, limit > used ? limit - used : 0);
  return available;
}

bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace slimtrain::runtime
