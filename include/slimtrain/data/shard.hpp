#pragma once
/**
 * @brief Pure functions that decide which samples a rank reads: the seeded global permutation
 * and the exact evaluation shares. No files, no MPI: tests check them directly.
 */
#include <cstdint>
#include <vector>

namespace slimtrain::data {

/** @brief Half-open index range [begin, end). */
struct Range {
  std::int64_t begin, end;
};

/**
 * @brief This rank's contiguous share of n samples: every index in exactly one share, shares
 * differ by at most one (the first n % world_size ranks hold one more). No padding.
 */
Range eval_share(std::int64_t n, int rank, int world_size);

/**
 * @brief A permutation of [0, n) that depends only on (seed, epoch): the same on every rank,
 * compiler and platform (own generator and Fisher-Yates, not std::shuffle).
 */
std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed, std::uint64_t epoch);

/** @brief Training samples per rank per epoch: n / world_size (the remainder is dropped). */
std::int64_t train_share_size(std::int64_t n, int world_size);

/** @brief splitmix64: a tiny, well-mixed, portable generator step. */
std::uint64_t splitmix64(std::uint64_t& state);

}  // namespace slimtrain::data
