#include "slimtrain/runtime/process_memory.hpp"

#include <fstream>
#include <string>

namespace slimtrain::runtime {
namespace {

// "VmRSS:     123456 kB" -> bytes; 0 when the field is missing.
std::uint64_t status_field(const std::string& name) {
  std::ifstream in("/proc/self/status");
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

bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace slimtrain::runtime
