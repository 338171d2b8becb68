// Compiled without coverage (fuzz/CMakeLists.txt): an instrumented file declares these section
// bounds itself, for its own registration with libFuzzer, and a second declaration there left
// libFuzzer seeing no coverage at all.
#include "coverage_counters.hpp"

extern "C" {
extern std::uint8_t __start___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
extern std::uint8_t __stop___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
}

namespace fuzz {
std::uint8_t* coverage_counters() {
  return __start___sancov_cntrs;
}
std::size_t coverage_counters_size() {
  return static_cast<std::size_t>(__stop___sancov_cntrs - __start___sancov_cntrs);
}
}  // namespace fuzz
