#pragma once
/** @brief Names in a message: "a, b, c". */
#include <string>
#include <vector>

namespace slimtrain::detail {

inline std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace slimtrain::detail
