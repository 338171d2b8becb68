#pragma once
#include <sstream>
#include <string>

namespace slimtrain::detail {

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace slimtrain::detail
