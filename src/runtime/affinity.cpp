#include "slimtrain/runtime/affinity.hpp"

#include <sched.h>

#include <algorithm>
#include <bitset>
#include <thread>

namespace slimtrain::runtime {

CpuMask own_cpu_mask() {
  CpuMask mask(kCpuMaskWords, 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    for (int c = 0; c < CPU_SETSIZE && c < static_cast<int>(kCpuMaskWords * 64); ++c)
      if (CPU_ISSET(c, &set)) mask[c / 64] |= std::uint64_t{1} << (c % 64);
    return mask;
  }
  const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int c = 0; c < machine && c < static_cast<int>(kCpuMaskWords * 64); ++c)
    mask[c / 64] |= std::uint64_t{1} << (c % 64);
  return mask;
}

int cpu_count(const CpuMask& mask) {
  int n = 0;
  for (std::uint64_t word : mask) n += static_cast<int>(std::bitset<64>(word).count());
  return n;
}

int cores_for_rank(const std::vector<CpuMask>& local_masks, int me) {
  const CpuMask& mine = local_masks.at(static_cast<std::size_t>(me));
  int sharing = 0;
  for (const CpuMask& other : local_masks) {
    bool overlaps = false;
    for (std::size_t w = 0; w < mine.size() && w < other.size(); ++w)
      overlaps = overlaps || (mine[w] & other[w]) != 0;
    sharing += overlaps ? 1 : 0;
  }
  return std::max(1, cpu_count(mine) / std::max(1, sharing));
}

}  // namespace slimtrain::runtime
