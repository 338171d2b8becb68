// The straggler rule: who is slowest against the (lower) median, when a rank is named, the
// phases named with it, and that it is named once; and SLIMTRAIN_INJECT action=slow.
#include <gtest/gtest.h>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/fault_injection.hpp"
#include "slimtrain/train/stragglers.hpp"

namespace st = slimtrain;
using st::train::PhaseMs;

namespace {

// data, forward, backward, sync, optimizer
PhaseMs times(double data, double forward, double sync = 5) {
  return {data, forward, 10, sync, 1};
}

TEST(Stragglers, RecordsSlowestAgainstTheLowerMedianAndNamesARankOnceAfterItsWindows) {
  st::train::StragglerWatch watch(0.25, 3, {"node1", "node1", "node2", "node2"});
  const std::vector<PhaseMs> window = {times(1, 20), times(1, 20), times(1, 21), times(20, 22)};
  for (int w = 1; w <= 2; ++w) {
    const auto record = watch.add_window(window);
    EXPECT_EQ(record["slowest"], 3);
    EXPECT_EQ(record["slowest_host"], "node2");
    EXPECT_DOUBLE_EQ(record["slowest_ms"].get<double>(), 53.0);
    EXPECT_DOUBLE_EQ(record["median_ms"].get<double>(), 32.0);  // lower middle of 32, 32, 33, 53
    EXPECT_EQ(record["compute_ms"].size(), 4u);
    EXPECT_FALSE(watch.warning()) << "named after " << w << " windows";
  }
  watch.add_window(window);
  ASSERT_TRUE(watch.warning());
  EXPECT_EQ(*watch.warning(),
            "rank 3 on node2 is 66% slower than the median over the last 3 windows: data 20x, "
            "forward 1.1x");
  EXPECT_EQ(watch.warning_record()["rank"], 3);
  EXPECT_EQ(watch.warning_record()["windows"], 3);
  watch.add_window(window);
  EXPECT_FALSE(watch.warning()) << "said once";
}

TEST(Stragglers, AStreakBreaksWhenTheRankCatchesUpOrAnotherIsSlowest) {
  st::train::StragglerWatch watch(0.25, 2, {"a", "b", "c"});
  const std::vector<PhaseMs> even = {times(1, 20), times(1, 20), times(1, 20)};
  const std::vector<PhaseMs> slow1 = {times(1, 20), times(15, 20), times(1, 20)};
  const std::vector<PhaseMs> slow2 = {times(1, 20), times(1, 20), times(15, 20)};
  watch.add_window(slow1);
  watch.add_window(even);
  watch.add_window(slow1);
  EXPECT_FALSE(watch.warning());
  watch.add_window(slow2);
  EXPECT_FALSE(watch.warning());
  watch.add_window(slow2);
  ASSERT_TRUE(watch.warning());
  EXPECT_EQ(watch.warning_record()["rank"], 2);
}

TEST(Stragglers, SyncIsNotComputeAndTwoRanksCompareWithTheFasterOne) {
  // The fast rank waits for the slow one in its sync: that must not make it the straggler.
  st::train::StragglerWatch watch(0.25, 1, {"h", "h"});
  watch.add_window({times(1, 20, 30), times(12, 20, 1)});
  ASSERT_TRUE(watch.warning());
  EXPECT_EQ(watch.warning_record()["rank"], 1);
  EXPECT_NEAR(watch.warning_record()["percent_slower"].get<double>(), 100.0 * 11 / 32, 1e-9);
}

TEST(Stragglers, ThresholdZeroNeverWarnsButStillRecords) {
  st::train::StragglerWatch watch(0.0, 1, {"h", "h"});
  const auto record = watch.add_window({times(1, 20), times(50, 20)});
  EXPECT_EQ(record["slowest"], 1);
  EXPECT_FALSE(watch.warning());
}

TEST(Stragglers, SlowInjectionPersistsAndNeedsTrainAndADelay) {
  const st::FaultPlan p = st::FaultPlan::parse("rank=1,phase=train,step=3,action=slow,delay=20ms");
  EXPECT_EQ(p.action, st::FaultAction::slow);
  EXPECT_DOUBLE_EQ(p.delay_s, 0.02);
  EXPECT_FALSE(p.armed(1, st::FaultPhase::train, 2));
  EXPECT_TRUE(p.armed(1, st::FaultPhase::train, 3));
  EXPECT_TRUE(p.armed(1, st::FaultPhase::train, 300));
  EXPECT_FALSE(p.armed(0, st::FaultPhase::train, 3));
  EXPECT_THROW(st::FaultPlan::parse("rank=1,phase=eval,step=3,action=slow,delay=1s"),
               st::ConfigError);
  EXPECT_THROW(st::FaultPlan::parse("rank=1,phase=train,step=3,action=slow"), st::ConfigError);
}

}  // namespace
