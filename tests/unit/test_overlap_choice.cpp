// --overlap auto: when all-reducing during backward is chosen, and the reason given.
#include <gtest/gtest.h>

#include "slimtrain/runtime/device.hpp"
#include "slimtrain/train/grad_sync.hpp"

using slimtrain::train::choose_overlap;

TEST(OverlapChoice, OneBucketStartsFromTheHookEvenWithoutASpareCore) {
  // The only bucket is complete with backward's last gradient: nothing left to slow down.
  const auto c = choose_overlap(1, false, 1, 1);
  EXPECT_TRUE(c.on);
  EXPECT_NE(c.reason.find("one gradient bucket"), std::string::npos) << c.reason;
}

TEST(OverlapChoice, GpuOverlapsWithSeveralBuckets) {
  EXPECT_TRUE(choose_overlap(3, true, 1, 1).on);
}

TEST(OverlapChoice, CpuNeedsACoreBeyondTheComputeThreads) {
  const auto none = choose_overlap(4, false, 1, 1);  // this CI machine: 2 cores, 2 ranks
  EXPECT_FALSE(none.on);
  EXPECT_NE(none.reason.find("no spare core (1 core, 1 compute threads)"), std::string::npos)
      << none.reason;
  EXPECT_FALSE(choose_overlap(4, false, 8, 8).on);
  const auto spare = choose_overlap(4, false, 8, 7);
  EXPECT_TRUE(spare.on);
  EXPECT_NE(spare.reason.find("8 cores for 7 compute threads"), std::string::npos) << spare.reason;
}

TEST(OverlapChoice, CoresPerRankIsAtLeastOne) {
  EXPECT_GE(slimtrain::runtime::cores_per_rank(1), 1);
  EXPECT_GE(slimtrain::runtime::cores_per_rank(1 << 20), 1);
}
