#include "slimtrain/runtime/cpu_info.hpp"

#include <fstream>
#include <sstream>

namespace slimtrain::runtime {
namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

CpuInfo parse_cpu_info(const std::string& text) {
  CpuInfo cpu;
  std::istringstream lines(text);
  std::string line;
  bool seen_processor = false;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    const std::string value = trimmed(line.substr(colon + 1));
    if (key == "processor") {
      if (seen_processor) break;  // the second core's block: the first said it all
      seen_processor = true;
    } else if (key == "model name" && cpu.model.empty()) {
      cpu.model = value;
    } else if (key == "vendor_id" && cpu.vendor.empty()) {
      cpu.vendor = value;
    } else if (key == "flags" && cpu.flags.empty()) {
      std::istringstream words(value);
      std::string word;
      while (words >> word) cpu.flags.insert(word);
    }
  }
  return cpu;
}

const CpuInfo& cpu_info() {
  static const CpuInfo cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_cpu_info(text.str());
  }();
  return cpu;
}

}  // namespace slimtrain::runtime
