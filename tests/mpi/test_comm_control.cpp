// The control plane at np = 2, 3, 4: typed host values, and one outcome on every rank when one
// rank decides or fails.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpi_runtime.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/core/error.hpp"

using namespace slimtrain;
using namespace slimtrain::comm;

namespace {
using slimtrain_test::rt;

TEST(ControlPlane, TypedValuesReachEveryRank) {
  ControlPlane control(rt(), "control");
  const int r = control.rank(), n = control.size();
  EXPECT_EQ(control.broadcast(std::int64_t{r == n - 1 ? 77 : -1}, n - 1), 77);
  const std::string long_text(3000, static_cast<char>('a' + n));
  EXPECT_EQ(control.broadcast(r == 0 ? long_text : std::string("ignored"), 0), long_text);
  const auto sums = control.all_reduce(std::vector<double>{1.0, 0.5 * r}, ReduceOp::sum);
  EXPECT_DOUBLE_EQ(sums[0], n);
  EXPECT_DOUBLE_EQ(sums[1], 0.25 * n * (n - 1));
  EXPECT_TRUE(control.agree(true));
  EXPECT_FALSE(control.agree(r != n - 1));
}

TEST(ControlPlane, ADecisionOnRankZeroIsEveryRanksAnswer) {
  ControlPlane control(rt(), "control");
  const std::string path = decide_on_root(control, 0, [&] {
    return std::string("checkpoint of rank ") + std::to_string(control.rank());
  });
  EXPECT_EQ(path, "checkpoint of rank 0");
}

TEST(ControlPlane, AnErrorOnRankZeroIsEveryRanksErrorOfTheSameClass) {
  ControlPlane control(rt(), "control");
  try {
    decide_on_root(control, 0, []() -> std::string {
      SLIMTRAIN_THROW(DataError, "--resume runs/x: no checkpoint verifies");
    });
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume runs/x: no checkpoint verifies"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

TEST(ControlPlane, TheLowestFailingRankIsEveryRanksError) {
  ControlPlane control(rt(), "control");
  const int n = control.size();
  try {
    on_all_ranks(control, [&] {
      if (control.rank() >= n - 2 && control.rank() > 0)
        SLIMTRAIN_THROW(ConfigError, "bad row on rank ", control.rank());
    });
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const int first = std::max(1, n - 2);
    const std::string want = "bad row on rank " + std::to_string(first);
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(on_all_ranks(control, [] {}));
}

}  // namespace
