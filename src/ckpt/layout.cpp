#include "slimtrain/ckpt/layout.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace slimtrain::ckpt {

std::string checkpoints_dir(const std::string& run_dir) {
  return run_dir + "/checkpoints";
}

std::string step_dir_name(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  return name;
}

std::optional<std::int64_t> parse_step_dir_name(const std::string& name) {
  const std::string prefix = "step-";
  if (name.size() < prefix.size() + 8 || name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 18) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoll(digits);
}

bool valid_blob_name(const std::string& blob_name) {
  if (blob_name.empty() || blob_name.size() > 100) return false;
  for (char c : blob_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string blob_file_name(const std::string& blob_name) {
  return "blob-" + blob_name + ".bin";
}

std::size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, std::size_t> sizes = {
      {"float64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8},
      {"int32", 4},   {"int16", 2},   {"int8", 1},    {"uint8", 1},    {"bool", 1}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

void crash_point(const char* stage) {
  const char* wanted = std::getenv("SLIMTRAIN_CKPT_CRASH_AT");
  if (wanted && std::strcmp(wanted, stage) == 0) std::_Exit(kCrashExitCode);
}

}  // namespace slimtrain::ckpt
