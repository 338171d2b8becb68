#include "slimtrain/data/shard.hpp"

#include <algorithm>
#include <numeric>

namespace slimtrain::data {

Range eval_share(std::int64_t n, int rank, int world_size) {
  const std::int64_t base = n / world_size;
  const std::int64_t extra = n % world_size;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::uint64_t state = seed * 0x2545f4914f6cdd1dull ^ (epoch + 0x632be59bd9b4e019ull);
  for (std::int64_t i = n - 1; i > 0; --i) {
    // Multiply-shift maps 64 random bits to [0, i] with negligible bias for any realistic n.
    const auto j = static_cast<std::int64_t>(
        (static_cast<unsigned __int128>(splitmix64(state)) * static_cast<std::uint64_t>(i + 1)) >>
        64);
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  return order;
}

std::int64_t train_share_size(std::int64_t n, int world_size) {
  return n / world_size;
}

}  // namespace slimtrain::data
