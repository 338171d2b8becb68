// --overlap auto: when all-reducing during backward is chosen, and the reason given.
#include <gtest/gtest.h>

#include "slimtrain/runtime/affinity.hpp"
#include "slimtrain/train/grad_sync.hpp"

using slimtrain::train::choose_overlap;

TEST(OverlapChoice, CpuDoesNotOverlapUnlessShardingGradients) {
  for (std::size_t buckets : {1u, 4u}) {
    const auto c = choose_overlap(buckets, false);
    EXPECT_FALSE(c.on);
    EXPECT_NE(c.reason.find("takes a core from backward"), std::string::npos) << c.reason;
    EXPECT_FALSE(choose_overlap(buckets, false, slimtrain::train::ShardMode::optimizer).on);
    const auto zero2 = choose_overlap(buckets, false, slimtrain::train::ShardMode::gradients);
    EXPECT_TRUE(zero2.on);
    EXPECT_NE(zero2.reason.find("--shard gradients"), std::string::npos) << zero2.reason;
  }
}

TEST(OverlapChoice, GpuOverlaps) {
  EXPECT_TRUE(choose_overlap(3, true).on);
  const auto one = choose_overlap(1, true);
  EXPECT_TRUE(one.on);
  EXPECT_NE(one.reason.find("one gradient bucket"), std::string::npos) << one.reason;
}

TEST(OverlapChoice, OwnMaskHasAtLeastOneCpu) {
  EXPECT_GE(slimtrain::runtime::cpu_count(slimtrain::runtime::own_cpu_mask()), 1);
}
