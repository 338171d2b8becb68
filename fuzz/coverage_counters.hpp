#pragma once
// The binary's coverage counters (-fsanitize=fuzzer's inline 8-bit counters, one section), which
// libFuzzer reads after each input: probe_server.hpp copies its child's into them.
#include <cstddef>
#include <cstdint>

namespace fuzz {
std::uint8_t* coverage_counters();
std::size_t coverage_counters_size();
}  // namespace fuzz
