// The MPI communicator against plain MPI at np = 2, 3, 4: sizes around the chunk boundaries, every
// dtype and op, broadcast, agree, the lowered per-call element limit, and deadlines that name the
// rank that did not arrive.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "mpi_runtime.hpp"
#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/comm/half.hpp"
#include "slimtrain/comm/progress.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/runtime/runtime.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include "slimtrain/comm/nccl_data_plane.hpp"
#endif

using namespace slimtrain;
using namespace slimtrain::comm;
using Clock = std::chrono::steady_clock;

namespace {
using slimtrain_test::rt;

// Integer-valued data, so float sums are exact whatever order MPI reduces in.
template <typename T>
std::vector<T> pattern(std::size_t n, int rank) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(
        static_cast<long long>((i * 7 + static_cast<std::size_t>(rank) * 13) % 101) - 50);
  }
  return v;
}

template <typename T>
std::vector<T> reference(std::vector<T> v, MPI_Datatype type, MPI_Op op) {
  if (!v.empty()) {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), type, op, MPI_COMM_WORLD);
  }
  return v;
}

MPI_Op mpi_op(ReduceOp op) {
  return op == ReduceOp::max ? MPI_MAX : op == ReduceOp::min ? MPI_MIN : MPI_SUM;
}

template <typename T>
void check_exact(Communicator& comm, DType dtype, MPI_Datatype type, std::size_t n, ReduceOp op) {
  auto mine = pattern<T>(n, comm.rank());
  auto expected = reference(mine, type, mpi_op(op));
  if (op == ReduceOp::avg) {
    for (T& x : expected) x = static_cast<T>(x / static_cast<T>(comm.size()));
  }
  comm.all_reduce(mine.data(), n, dtype, op);
  ASSERT_EQ(mine.size(), expected.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (op == ReduceOp::avg) {
      ASSERT_NEAR(static_cast<double>(mine[i]), static_cast<double>(expected[i]), 1e-6)
          << to_string(dtype) << " " << to_string(op) << " n=" << n << " at " << i;
    } else {
      ASSERT_EQ(mine[i], expected[i])
          << to_string(dtype) << " " << to_string(op) << " n=" << n << " at " << i;
    }
  }
}

void check_16(Communicator& comm, DType dtype, std::size_t n, ReduceOp op) {
  const bool half = dtype == DType::f16;
  auto to_f = half ? half_to_float : bf16_to_float;
  auto from_f = half ? float_to_half : float_to_bf16;
  std::vector<std::uint16_t> mine(n);
  std::vector<float> as_float(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Non-integers, so rounding in the 16-bit reduction really happens.
    const float x = std::sin(static_cast<float>(i) * 0.37f + comm.rank()) * 8.0f;
    mine[i] = from_f(x);
    as_float[i] = to_f(mine[i]);
  }
  auto expected = reference(as_float, MPI_FLOAT, mpi_op(op));
  comm.all_reduce(mine.data(), n, dtype, op);
  // Each of the size-1 pairwise steps rounds once: relative error up to size ulps.
  const float eps = half ? 1.0f / 1024 : 1.0f / 128;
  for (std::size_t i = 0; i < n; ++i) {
    float want = expected[i];
    if (op == ReduceOp::avg) want /= static_cast<float>(comm.size());
    const float tol = (std::fabs(want) + 8.0f * comm.size()) * eps * comm.size();
    ASSERT_NEAR(to_f(mine[i]), want, tol)
        << to_string(dtype) << " " << to_string(op) << " at " << i;
  }
}

const std::size_t kChunk = 4096;  // bytes: small, so modest buffers have many pieces
std::vector<std::size_t> sizes(std::size_t element) {
  return {0, 1, 1001, kChunk / element, 37 * kChunk / element + 3};
}
}  // namespace

TEST(MpiComm, EveryDtypeOpAndSizeMatchesPlainMpi) {
  CommConfig config;
  config.chunk_bytes = kChunk;
  auto comm = make_mpi_communicator(rt(), "train", config);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min}) {
    for (std::size_t n : sizes(4)) check_exact<float>(*comm, DType::f32, MPI_FLOAT, n, op);
    for (std::size_t n : sizes(8)) check_exact<double>(*comm, DType::f64, MPI_DOUBLE, n, op);
    if (op != ReduceOp::avg) {
      for (std::size_t n : sizes(8)) {
        check_exact<std::int64_t>(*comm, DType::i64, MPI_INT64_T, n, op);
      }
    }
    for (std::size_t n : sizes(2)) {
      check_16(*comm, DType::f16, n, op);
      check_16(*comm, DType::bf16, n, op);
    }
  }
}

TEST(MpiComm, LoweredPerCallLimitGivesBitIdenticalIntegers) {
  // Stands in for counts above INT_MAX: the element cap forces pieces of 7 elements.
  CommConfig config;
  config.chunk_bytes = 0;
  config.max_elements_per_call = 7;
  auto comm = make_mpi_communicator(rt(), "train", config);
  std::vector<std::int64_t> mine(1000);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    mine[i] = (static_cast<std::int64_t>(i) << 40) + comm->rank() * 1000003 + 1;
  }
  auto expected = reference(mine, MPI_INT64_T, MPI_SUM);
  comm->all_reduce(mine.data(), mine.size(), DType::i64, ReduceOp::sum);
  EXPECT_EQ(0, std::memcmp(mine.data(), expected.data(), mine.size() * 8));
  EXPECT_THROW(
      [] {
        CommConfig bad;
        bad.max_elements_per_call = 0;
        make_mpi_communicator(rt(), "bad", bad);
      }(),
      ConfigError);
}

TEST(MpiComm, BroadcastFromLastRank) {
  CommConfig config;
  config.chunk_bytes = kChunk;
  auto comm = make_mpi_communicator(rt(), "train", config);
  const int root = comm->size() - 1;
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, std::size_t{20000}}) {
    std::vector<double> v(n, -1.0);
    if (comm->rank() == root) {
      for (std::size_t i = 0; i < n; ++i) v[i] = 0.25 * static_cast<double>(i);
    }
    comm->broadcast(v.data(), n, DType::f64, root);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], 0.25 * static_cast<double>(i));
  }
  // Async with keep_alive: the operation owns the buffer.
  auto buffer = std::make_shared<std::vector<std::int64_t>>(5000, comm->rank());
  auto work = comm->broadcast_async(buffer->data(), buffer->size(), DType::i64, root, {}, buffer);
  work->wait();
  for (std::int64_t x : *buffer) ASSERT_EQ(x, root);
}

TEST(MpiComm, AgreeIsLogicalAnd) {
  auto comm = make_mpi_communicator(rt(), "eval");
  EXPECT_TRUE(comm->agree(true));
  for (int dissenter = 0; dissenter < comm->size(); ++dissenter) {
    EXPECT_FALSE(comm->agree(comm->rank() != dissenter)) << "dissenter " << dissenter;
  }
  EXPECT_FALSE(comm->agree(false));
  comm->barrier();
}

TEST(MpiComm, ManyAsyncOperationsRunInEnqueueOrder) {
  CommConfig config;
  config.chunk_bytes = kChunk;
  auto comm = make_mpi_communicator(rt(), "train", config);
  std::vector<std::shared_ptr<Work>> works;
  std::vector<std::shared_ptr<std::vector<float>>> buffers;
  for (int b = 0; b < 12; ++b) {
    buffers.push_back(std::make_shared<std::vector<float>>(3000 + b * 17, static_cast<float>(b)));
    works.push_back(comm->all_reduce_async(buffers.back()->data(), buffers.back()->size(),
                                           DType::f32, ReduceOp::sum, {-1.0, "grad-bucket"},
                                           buffers.back()));
  }
  for (auto& w : works) w->wait();
  for (int b = 0; b < 12; ++b) {
    for (float x : *buffers[static_cast<std::size_t>(b)]) {
      ASSERT_EQ(x, static_cast<float>(b * comm->size()));
    }
  }
  std::uint64_t expected = 0;
  for (const auto& buf : buffers) expected += buf->size() * sizeof(float);
  EXPECT_EQ(comm->bytes_reduced(), expected);
}

TEST(MpiComm, LateRankIsNamedWithinDeadlineAndCommunicatorRecovers) {
  CommConfig config;
  config.deadline.grace_s = 2.0;
  auto comm = make_mpi_communicator(rt(), "train", config);
  auto other = make_mpi_communicator(rt(), "eval", config);
  comm->barrier();
  const int late = comm->size() - 1;
  const double deadline = 1.0;
  std::vector<std::int64_t> data(1000, comm->rank() + 1);
  auto staged = std::make_shared<std::vector<std::int64_t>>(data);
  if (comm->rank() == late) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    comm->all_reduce_async(staged->data(), staged->size(), DType::i64, ReduceOp::sum,
                           {deadline, "late"}, staged)
        ->wait();
  } else {
    const auto start = Clock::now();
    try {
      comm->all_reduce_async(staged->data(), staged->size(), DType::i64, ReduceOp::sum,
                             {deadline, "late"}, staged)
          ->wait();
      FAIL() << "no timeout although rank " << late << " slept 3 s";
    } catch (const TimeoutError& e) {
      const double took = std::chrono::duration<double>(Clock::now() - start).count();
      EXPECT_GE(took, deadline);
      EXPECT_LE(took, deadline + config.deadline.grace_s);
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{late});
      const std::string what = e.what();
      EXPECT_NE(what.find("train all_reduce seq 2 of 8000 bytes missed its deadline of 1 s"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("missing ranks: " + std::to_string(late) + " on " +
                          rt().hostnames()[static_cast<std::size_t>(late)] + " (at seq 1; now: "),
                std::string::npos)
          << what;
    }
  }
  // The timed-out operation drains once the late rank arrives: later ones stay matched.
  comm->barrier({10.0, "after-timeout"});
  std::vector<std::int64_t> again(513, comm->rank() + 1);
  comm->all_reduce(again.data(), again.size(), DType::i64, ReduceOp::sum, {10.0, ""});
  const std::int64_t total = static_cast<std::int64_t>(comm->size()) * (comm->size() + 1) / 2;
  for (std::int64_t x : again) ASSERT_EQ(x, total);
  for (std::int64_t x : *staged) ASSERT_EQ(x, total);  // the drained operation was correct too
  EXPECT_TRUE(other->agree(true));                     // the other communicator never saw any of it
}

TEST(MpiComm, SkippedEvalDoesNotDesynchroniseTraining) {
  CommConfig config;
  config.deadline.grace_s = 1.0;
  auto train = make_mpi_communicator(rt(), "train", config);
  auto eval = make_mpi_communicator(rt(), "eval", config);
  const int late = 0;
  bool eval_ok = true;
  if (eval->rank() == late) {
    // Rank 0 trains first and reaches the eval reduction late.
    std::vector<double> g(300, 1.0);
    train->all_reduce(g.data(), g.size(), DType::f64, ReduceOp::sum);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
  std::vector<double> stats(4, 1.0);
  try {
    eval->all_reduce(stats.data(), stats.size(), DType::f64, ReduceOp::sum, {0.5, "eval-stats"});
  } catch (const TimeoutError& e) {
    eval_ok = false;
    EXPECT_EQ(e.missing_ranks(), std::vector<int>{late});
  }
  if (eval->rank() != late) {
    EXPECT_FALSE(eval_ok);
    std::vector<double> g(300, 1.0);
    train->all_reduce(g.data(), g.size(), DType::f64, ReduceOp::sum);
    for (double x : g) ASSERT_EQ(x, train->size());
  }
  // Everyone takes one decision; the late rank's own view decides nothing on its own.
  const bool all_ok = eval->agree(eval_ok, {10.0, "eval-commit"});
  EXPECT_FALSE(all_ok);
  std::vector<double> g(300, 2.0);
  train->all_reduce(g.data(), g.size(), DType::f64, ReduceOp::sum);
  for (double x : g) ASSERT_EQ(x, 2.0 * train->size());
}

// A late rank is not only named: the report says what it is doing now, here an evaluation whose
// statistics reduction on another communicator waits for the others.
TEST(MpiComm, LateRankReportSaysWhatItIsDoingNow) {
  CommConfig config;
  config.deadline.grace_s = 2.0;
  auto train = make_mpi_communicator(rt(), "steps", config);
  auto eval = make_mpi_communicator(rt(), "evalstats", config);
  train->barrier();
  const int late = 1;
  auto stats = std::make_shared<std::vector<double>>(8, 1.0);
  if (train->rank() == late) {
    set_activity("evaluation", 8);
    auto work = eval->all_reduce_async(stats->data(), stats->size(), DType::f64, ReduceOp::sum,
                                       {30.0, "eval-stats"}, stats);
    work->wait();  // completes once the others give up on "steps" and join
    set_activity("", -1);
  } else {
    try {
      train->barrier({1.0, "step-control"});
      FAIL() << "no timeout although rank " << late << " is evaluating";
    } catch (const TimeoutError& e) {
      const std::string what = e.what();
      const std::string host = rt().hostnames()[static_cast<std::size_t>(late)];
      EXPECT_NE(what.find("missing ranks: 1 on " + host +
                          " (at seq 1; now: evaluation at step 8, running all_reduce #1 of 64 "
                          "bytes [eval-stats] on evalstats)"),
                std::string::npos)
          << what;
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{late});
    }
    auto work = eval->all_reduce_async(stats->data(), stats->size(), DType::f64, ReduceOp::sum,
                                       {30.0, "eval-stats"}, stats);
    work->wait();
  }
  for (double x : *stats) ASSERT_EQ(x, train->size());
  if (train->rank() == late) train->barrier({30.0, "step-control"});
  train->barrier({30.0, "after"});  // the timed-out barrier drained: the next one matches
}

TEST(MpiComm, MixedFieldsAndGatherMatchPlainMpi) {
  auto comm = make_mpi_communicator(rt(), "control");
  const int r = comm->rank();
  const auto out =
      comm->all_reduce_fields({Field::of(FieldOp::max, r), Field::of(FieldOp::min, r),
                               Field::of(FieldOp::sum, r + 1), Field::real_sum(0.5 * r)});
  const int n = comm->size();
  EXPECT_EQ(out[0].value, n - 1);
  EXPECT_EQ(out[1].value, 0);
  EXPECT_EQ(out[2].value, n * (n + 1) / 2);
  EXPECT_DOUBLE_EQ(out[3].real(), 0.25 * n * (n - 1));
  // Operators that differ between ranks are a caller bug: the field says so (op 0).
  const auto bad = comm->all_reduce_fields({Field::of(r == 0 ? FieldOp::max : FieldOp::sum, 1)});
  EXPECT_EQ(static_cast<int>(bad[0].op), 0);
  const auto all = comm->all_gather({r, 10 * r});
  ASSERT_EQ(all.size(), static_cast<std::size_t>(2 * n));
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(all[static_cast<std::size_t>(2 * k)], k);
    EXPECT_EQ(all[static_cast<std::size_t>(2 * k + 1)], 10 * k);
  }
}

#ifdef SLIMTRAIN_HAVE_NCCL
TEST(NcclBootstrap, UniqueIdIsRankZerosOnEveryRank) {
  ControlPlane control(rt(), "bootstrap");
  const ncclUniqueId id = nccl_bootstrap_id(control, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> all(sizeof id * static_cast<std::size_t>(size));
  MPI_Allgather(&id, sizeof id, MPI_BYTE, all.data(), sizeof id, MPI_BYTE, MPI_COMM_WORLD);
  bool nonzero = false;
  for (std::size_t i = 0; i < sizeof id; ++i) nonzero |= all[i] != 0;
  EXPECT_TRUE(nonzero) << "rank 0's id is all zeros";
  for (int r = 1; r < size; ++r) {
    EXPECT_EQ(0, std::memcmp(all.data(), all.data() + r * sizeof id, sizeof id)) << "rank " << r;
  }
  // A second bootstrap from another root yields a different id, the same everywhere.
  const ncclUniqueId id2 = nccl_bootstrap_id(control, size - 1);
  EXPECT_NE(0, std::memcmp(&id, &id2, sizeof id));
}
#endif
