// Reduce-scatter and all-gather on the CPU data plane at np = 2, 3, 4 against plain MPI: sizes
// around the piece boundaries (the pieces are packed), float32 and bfloat16, in place, deadlines
// that name the rank that did not arrive, and the desync fingerprint that counts them.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>
#include <vector>

#include "mpi_runtime.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/error.hpp"

using namespace slimtrain;
using namespace slimtrain::comm;

namespace {
using slimtrain_test::rt;

std::unique_ptr<DataPlane> plane(std::size_t chunk_bytes, double base_s = 30) {
  CommConfig config;
  config.chunk_bytes = chunk_bytes;
  config.deadline.base_s = base_s;
  config.deadline.grace_s = 2.0;
  return make_data_plane(rt(), torch::Device(torch::kCPU), "data", config);
}

// Integer-valued, so float sums are exact in any order.
torch::Tensor pattern(std::int64_t n, int rank) {
  return (torch::arange(n, torch::kFloat32) * 7 + 13 * rank).remainder(101) - 50;
}

}  // namespace

TEST(DataPlaneBlocks, ReduceScatterMatchesAllReduceBlocks) {
  const int n = rt().size(), r = rt().rank();
  for (const std::size_t chunk : {std::size_t{0}, std::size_t{256}}) {
    auto p = plane(chunk);
    for (const std::int64_t block : {0, 1, 5, 64, 1001}) {
      const torch::Tensor mine = pattern(block * n, r);
      torch::Tensor expected = mine.clone();
      MPI_Allreduce(MPI_IN_PLACE, expected.data_ptr<float>(), static_cast<int>(expected.numel()),
                    MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      torch::Tensor out = torch::full({block}, -1.0f);
      p->reduce_scatter_async(mine, out, ReduceOp::sum)->wait();
      EXPECT_TRUE(torch::equal(out, expected.narrow(0, block * r, block)))
          << "block " << block << " chunk " << chunk;
      p->reduce_scatter_async(mine, out, ReduceOp::avg)->wait();
      EXPECT_TRUE(torch::allclose(out, expected.narrow(0, block * r, block) / n))
          << "avg, block " << block << " chunk " << chunk;
    }
  }
}

TEST(DataPlaneBlocks, Bf16ReduceScatterRoundsOncePerStep) {
  const int n = rt().size(), r = rt().rank();
  auto p = plane(128);
  const std::int64_t block = 300;
  const torch::Tensor values = torch::sin(torch::arange(block * n, torch::kFloat32) * 0.37 + r);
  const torch::Tensor wire = values.to(torch::kBFloat16);
  torch::Tensor expected = wire.to(torch::kFloat32);
  MPI_Allreduce(MPI_IN_PLACE, expected.data_ptr<float>(), static_cast<int>(expected.numel()),
                MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  torch::Tensor out = torch::zeros({block}, torch::kBFloat16);
  p->reduce_scatter_async(wire, out, ReduceOp::sum)->wait();
  const torch::Tensor want = expected.narrow(0, block * r, block);
  const double worst = (out.to(torch::kFloat32) - want).abs().max().item<double>();
  EXPECT_LT(worst, n * (1.0 + n) / 128.0) << "more than a bf16 rounding per step";
}

TEST(DataPlaneBlocks, AllGatherInPlaceAndOutOfPlace) {
  const int n = rt().size(), r = rt().rank();
  for (const std::size_t chunk : {std::size_t{0}, std::size_t{200}}) {
    auto p = plane(chunk);
    for (const std::int64_t block : {1, 7, 999}) {
      torch::Tensor expected = torch::empty({block * n});
      for (int k = 0; k < n; ++k) expected.narrow(0, block * k, block).copy_(pattern(block, k));
      torch::Tensor out = torch::zeros({block * n});
      p->all_gather_async(pattern(block, r), out)->wait();
      EXPECT_TRUE(torch::equal(out, expected)) << "block " << block << " chunk " << chunk;
      torch::Tensor same = torch::zeros({block * n});
      same.narrow(0, block * r, block).copy_(pattern(block, r));
      p->all_gather_async(same.narrow(0, block * r, block), same)->wait();
      EXPECT_TRUE(torch::equal(same, expected)) << "in place, block " << block;
    }
  }
}

TEST(DataPlaneBlocks, LateRankIsNamedWithinTheDeadline) {
  const int n = rt().size(), r = rt().rank();
  const int late = n - 1;
  auto p = plane(0, 1.0);
  auto in = torch::ones({64 * n});
  auto out = torch::zeros({64});
  comm::OpOptions options;
  options.tag = "late-scatter";
  options.timeout_s = 1.0;
  if (r == late) std::this_thread::sleep_for(std::chrono::seconds(3));
  const auto start = std::chrono::steady_clock::now();
  try {
    p->reduce_scatter_async(in, out, ReduceOp::sum, options)->wait();
    EXPECT_EQ(r, late) << "no timeout although rank " << late << " slept 3 s";
  } catch (const TimeoutError& e) {
    EXPECT_NE(r, late);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LE(took, 1.0 + 2.0 + 0.5);
    EXPECT_EQ(e.missing_ranks(), std::vector<int>{late});
    EXPECT_NE(std::string(e.what()).find("reduce_scatter"), std::string::npos) << e.what();
  }
  // The timed-out operation drains once the late rank arrives: the next ones stay matched.
  options.timeout_s = 10.0;
  p->all_gather_async(out, torch::zeros({64 * n}), options)->wait();
  EXPECT_TRUE(torch::equal(out, torch::full({64}, static_cast<float>(n))));
}

TEST(DataPlaneBlocks, FingerprintCountsBlockOperations) {
  const int n = rt().size();
  auto a = plane(0);
  auto b = plane(0);
  a->reduce_scatter_async(torch::ones({4 * n}), torch::zeros({4}), ReduceOp::sum)->wait();
  b->all_reduce(torch::ones({4 * n}), ReduceOp::sum);
  EXPECT_NE(a->fingerprint(), b->fingerprint()) << "a reduce-scatter looks like an all-reduce";
  const auto log = a->issued_after(0);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].kind, OpKind::reduce_scatter);
  EXPECT_EQ(log[0].count, static_cast<std::uint64_t>(4 * n));
}

// settle(): what a checkpoint waits for (issue 54). Operations issued and never waited have all
// ended when it returns.
TEST(DataPlaneSettle, WaitsForEveryOperationIssued) {
  const int n = rt().size();
  auto p = plane(256);
  std::vector<torch::Tensor> ts;
  for (int i = 0; i < 5; ++i) {
    ts.push_back(torch::full({1000 + i}, static_cast<float>(i)));
    p->all_reduce_async(ts.back(), ReduceOp::sum);
  }
  p->settle();
  for (int i = 0; i < 5; ++i)
    EXPECT_TRUE(torch::equal(ts[i], torch::full({1000 + i}, static_cast<float>(i * n)))) << i;
  EXPECT_NO_THROW(p->throw_if_failed());
}

// A late rank in an operation nobody waited for: settle() throws the report naming it within the
// deadline, and keeps throwing after the operation drained, so no later checkpoint holds it.
TEST(DataPlaneSettle, ALateOperationFailsSettleFromThenOn) {
  const int n = rt().size(), r = rt().rank();
  const int late = n - 1;
  auto p = plane(0, 1.0);
  torch::Tensor t = torch::ones({64});
  comm::OpOptions options;
  options.tag = "late";
  options.timeout_s = 1.0;
  if (r == late) std::this_thread::sleep_for(std::chrono::seconds(3));
  p->all_reduce_async(t, ReduceOp::sum, options);  // not waited: the step went on
  const auto start = std::chrono::steady_clock::now();
  if (r == late) {
    EXPECT_NO_THROW(p->settle());
    EXPECT_TRUE(torch::equal(t, torch::full({64}, static_cast<float>(n))));
  } else {
    try {
      p->settle();
      ADD_FAILURE() << "settle() returned although rank " << late << " slept 3 s";
    } catch (const TimeoutError& e) {
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_LE(took, 1.0 + 2.0 + 0.5);
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{late});
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the late operation drains meanwhile
    EXPECT_THROW(p->settle(), TimeoutError) << "the failure is kept";
    EXPECT_THROW(p->throw_if_failed(), TimeoutError);
  }
  // The engine still matches operations across ranks (the job would end; a test may go on).
  torch::Tensor u = torch::ones({8});
  p->all_reduce(u, ReduceOp::sum, {10.0, "after"});
  EXPECT_TRUE(torch::equal(u, torch::full({8}, static_cast<float>(n))));
}
