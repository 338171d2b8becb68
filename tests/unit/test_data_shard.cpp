// The pure sharding functions: exact evaluation shares and the reproducible permutation.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "slimtrain/data/shard.hpp"

namespace sd = slimtrain::data;

TEST(EvalShare, EverySampleExactlyOnceForAnyWorldSize) {
  for (std::int64_t n : {0, 1, 5, 7, 10, 101, 1000}) {
    for (int world = 1; world <= 9; ++world) {
      std::vector<int> seen(static_cast<std::size_t>(n), 0);
      std::int64_t smallest = n, largest = 0, expected_begin = 0;
      for (int r = 0; r < world; ++r) {
        const sd::Range share = sd::eval_share(n, r, world);
        EXPECT_EQ(share.begin, expected_begin) << "shares must be contiguous, n=" << n;
        expected_begin = share.end;
        for (std::int64_t i = share.begin; i < share.end; ++i) ++seen[static_cast<std::size_t>(i)];
        smallest = std::min(smallest, share.end - share.begin);
        largest = std::max(largest, share.end - share.begin);
      }
      EXPECT_EQ(expected_begin, n);
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
      EXPECT_LE(largest - smallest, 1) << "n=" << n << " world=" << world;
    }
  }
}

TEST(Permutation, IsAPermutationAndDependsOnlyOnSeedAndEpoch) {
  const auto a = sd::permutation(1000, 42, 3);
  const auto b = sd::permutation(1000, 42, 3);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, sd::permutation(1000, 42, 4));
  EXPECT_NE(a, sd::permutation(1000, 43, 3));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  // Pinned values: the order must not change across compilers or releases (resume relies on it).
  EXPECT_EQ(sd::permutation(8, 1, 0), (std::vector<std::int64_t>{1, 4, 6, 7, 0, 2, 5, 3}));
  EXPECT_EQ(sd::train_share_size(10, 3), 3);
}
