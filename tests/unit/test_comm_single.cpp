// World size 1 with no launcher: the Runtime initialises MPI itself and every collective works.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <numeric>
#include <vector>

#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/comm/bandwidth_probe.hpp"
#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/device_setup.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

using namespace slimtrain;
using namespace slimtrain::comm;

namespace {
runtime::Runtime& rt() {
  static runtime::Runtime instance;
  return instance;
}
}  // namespace

TEST(SingleRank, RuntimeWithoutLauncher) {
  EXPECT_EQ(rt().size(), 1);
  EXPECT_EQ(rt().rank(), 0);
  EXPECT_EQ(rt().local_size(), 1);
  ASSERT_EQ(rt().hostnames().size(), 1u);
}

TEST(SingleRank, CollectivesAreIdentities) {
  CommConfig config;
  config.chunk_bytes = 64;
  auto comm = make_mpi_communicator(rt(), "train", config);
  EXPECT_EQ(comm->size(), 1);
  std::vector<double> v(1001);
  std::iota(v.begin(), v.end(), 0.5);
  const auto expected = v;
  comm->all_reduce(v.data(), v.size(), DType::f64, ReduceOp::sum);
  EXPECT_EQ(v, expected);
  comm->all_reduce(v.data(), v.size(), DType::f64, ReduceOp::avg);
  EXPECT_EQ(v, expected);
  comm->broadcast(v.data(), v.size(), DType::f64, 0);
  EXPECT_EQ(v, expected);
  comm->barrier();
  EXPECT_TRUE(comm->agree(true));
  EXPECT_FALSE(comm->agree(false));
  EXPECT_EQ(comm->bytes_reduced(), 3 * 1001 * 8u);
  EXPECT_THROW(comm->broadcast(v.data(), 1, DType::f64, 1), ConfigError);
  std::int64_t i = 7;
  EXPECT_THROW(comm->all_reduce(&i, 1, DType::i64, ReduceOp::avg), ConfigError);
  EXPECT_THROW(comm->all_reduce(nullptr, 3, DType::f32, ReduceOp::sum), ConfigError);
}

TEST(SingleRank, DataPlaneFactoryRejectsDevicesWithoutABackend) {
  EXPECT_THROW(make_data_plane(rt(), torch::Device(torch::kMeta), "x"), ConfigError);
#ifndef SLIMTRAIN_HAVE_NCCL
  EXPECT_THROW(make_data_plane(rt(), torch::Device(torch::kCUDA, 0), "x"), ConfigError);
#endif
}

TEST(SingleRank, DataPlaneTakesTensorsOnItsDeviceOnly) {
  auto plane = make_data_plane(rt(), torch::Device(torch::kCPU), "data");
  EXPECT_EQ(plane->device(), torch::Device(torch::kCPU));
  torch::Tensor t = torch::arange(10, torch::kFloat);
  plane->all_reduce(t, ReduceOp::sum);
  EXPECT_TRUE(torch::equal(t, torch::arange(10, torch::kFloat)));
  auto work = plane->all_reduce_async(t, ReduceOp::max);
  work->wait();
  plane->broadcast(t, 0);
  EXPECT_EQ(plane->ops_issued(), 3u);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kHalf)), DType::f16);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kBFloat16)), DType::bf16);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kLong)), DType::i64);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kByte)), DType::u8);
  EXPECT_THROW(dtype_of(torch::zeros({1}, torch::kInt)), ConfigError);
  EXPECT_THROW(plane->all_reduce(torch::zeros({2}, torch::kInt), ReduceOp::sum), ConfigError);
  // A broadcast takes any element type, as bytes: a bool mask, int32 ids, a 0-d int32 scalar.
  const std::uint64_t before = plane->ops_issued();
  torch::Tensor mask = torch::tril(torch::ones({3, 3}, torch::kBool));
  torch::Tensor ids = torch::arange(5, torch::kInt);
  torch::Tensor scalar = torch::tensor(7, torch::kInt);
  plane->broadcast(mask, 0);
  plane->broadcast(ids, 0);
  plane->broadcast(scalar, 0);
  EXPECT_TRUE(torch::equal(mask, torch::tril(torch::ones({3, 3}, torch::kBool))));
  EXPECT_TRUE(torch::equal(ids, torch::arange(5, torch::kInt)));
  EXPECT_EQ(scalar.item<int>(), 7);
  EXPECT_EQ(plane->ops_issued(), before + 3);
  torch::Tensor strided = torch::zeros({4, 4}).t();
  EXPECT_THROW(plane->all_reduce(strided, ReduceOp::sum), ConfigError);
  EXPECT_THROW(plane->all_reduce(torch::zeros({2}, torch::kLong), ReduceOp::avg), ConfigError);
  // A tensor on another device (host memory on a CUDA plane, here a meta tensor on the CPU
  // plane) is refused, naming both devices.
  try {
    plane->all_reduce(torch::zeros({4}, torch::Device(torch::kMeta)), ReduceOp::sum);
    FAIL() << "a meta tensor reached the CPU data plane";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("but this data plane moves cpu memory"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(plane->ops_issued(), 6u) << "refused operations are not counted";
}

TEST(SingleRank, DataPlaneFingerprintFollowsWhatWasIssued) {
  auto a = make_data_plane(rt(), torch::Device(torch::kCPU), "a");
  auto b = make_data_plane(rt(), torch::Device(torch::kCPU), "b");
  EXPECT_EQ(a->fingerprint(), b->fingerprint());
  a->all_reduce(torch::zeros({8}), ReduceOp::sum);
  b->all_reduce(torch::zeros({8}), ReduceOp::sum);
  EXPECT_EQ(a->fingerprint(), b->fingerprint());
  a->all_reduce(torch::zeros({8}), ReduceOp::sum);
  b->all_reduce(torch::zeros({9}), ReduceOp::sum);  // one element more
  EXPECT_NE(a->fingerprint(), b->fingerprint());
  const auto log = b->issued_after(1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].seq, 2u);
  EXPECT_EQ(log[0].kind, OpKind::all_reduce);
  EXPECT_EQ(log[0].count, 9u);
  EXPECT_EQ(log[0].bytes(), 36u);
}

TEST(SingleRank, BlockCollectivesAreCheckedAndFingerprinted) {
  auto plane = make_data_plane(rt(), torch::Device(torch::kCPU), "blocks");
  torch::Tensor in = torch::arange(6, torch::kFloat32);
  torch::Tensor out = torch::zeros({6});
  plane->reduce_scatter_async(in, out, ReduceOp::avg)->wait();
  EXPECT_TRUE(torch::equal(out, in));
  EXPECT_THROW(plane->reduce_scatter_async(in, in, ReduceOp::sum), ConfigError);  // overlap
  EXPECT_THROW(plane->reduce_scatter_async(in, torch::zeros({5}), ReduceOp::sum), ConfigError);
  EXPECT_THROW(plane->all_gather_async(torch::zeros({3}), torch::zeros({6})), ConfigError);
  plane->all_gather_async(out, out)->wait();  // in place
  EXPECT_TRUE(torch::equal(out, in));
  const auto log = plane->issued_after(0);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].kind, OpKind::reduce_scatter);
  EXPECT_EQ(log[1].kind, OpKind::all_gather);
}

TEST(SingleRank, ControlPlaneCarriesTypedHostValues) {
  ControlPlane control(rt(), "control");
  EXPECT_TRUE(control.agree(true));
  EXPECT_FALSE(control.agree(false));
  EXPECT_EQ(control.all_reduce(std::vector<std::int64_t>{3, -4}, ReduceOp::max),
            (std::vector<std::int64_t>{3, -4}));
  EXPECT_EQ(control.all_reduce(std::vector<double>{0.5}, ReduceOp::sum),
            (std::vector<double>{0.5}));
  EXPECT_EQ(control.broadcast(std::int64_t{42}, 0), 42);
  const std::string text(1000, 'x');
  EXPECT_EQ(control.broadcast(text, 0), text);
  EXPECT_EQ(control.broadcast(std::string(), 0), "");
  const auto fields = control.reduce_fields(
      {Field::of(FieldOp::max, 7), Field::of(FieldOp::min, -2), Field::real_sum(1.25)});
  EXPECT_EQ(fields[0].value, 7);
  EXPECT_EQ(fields[1].value, -2);
  EXPECT_DOUBLE_EQ(fields[2].real(), 1.25);
  EXPECT_EQ(control.all_gather({1, 2, 3}), (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(SingleRank, DecisionsOnRootReachEveryRankAsAnswerOrError) {
  ControlPlane control(rt(), "control");
  EXPECT_EQ(decide_on_root(control, 0, [] { return std::string("path"); }), "path");
  EXPECT_THROW(decide_on_root(control, 0,
                              []() -> std::string { SLIMTRAIN_THROW(DataError, "no such file"); }),
               DataError);
  EXPECT_NO_THROW(on_all_ranks(control, [] {}));
  EXPECT_THROW(on_all_ranks(control, [] { SLIMTRAIN_THROW(ConfigError, "bad"); }), ConfigError);
}

TEST(SingleRank, BindCpuDevice) {
  ControlPlane control(rt(), "control");
  const runtime::DeviceBinding b = train::bind_device(rt(), control, "cpu", 0);
  EXPECT_EQ(b.kind, "cpu");
  EXPECT_GE(b.threads, 1);
  EXPECT_EQ(at::get_num_threads(), b.threads);
  EXPECT_EQ(train::bind_device(rt(), control, "cpu", 1).threads, 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_THROW(train::bind_device(rt(), control, "gpu", 0), ConfigError);
  // No GPU here (or no CUDA build): cuda must be refused with a clear error, never crash.
  int devices = 0;
#ifdef SLIMTRAIN_HAVE_NCCL
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
#endif
  if (devices == 0) {
    EXPECT_THROW(train::bind_device(rt(), control, "cuda", 0), ConfigError);
  }
}

// --chunk-mb 0: a smaller piece size replaces the default only when clearly faster.
TEST(ChunkChoice, KeepsTheFirstUnlessAnotherIsTenPercentFaster) {
  EXPECT_EQ(pick_fastest({0.100, 0.095}), 0u) << "5% is noise";
  EXPECT_EQ(pick_fastest({0.100, 0.080}), 1u);
  EXPECT_EQ(pick_fastest({0.100, 0.120}), 0u);
  EXPECT_EQ(pick_fastest({0.100, 0.080, 0.050}), 2u) << "the fastest of those that qualify";
  EXPECT_EQ(pick_fastest({0.100}), 0u);
}

TEST(ChunkChoice, TimesEveryPlaneOnOneRank) {
  CommConfig small;
  small.chunk_bytes = 1 << 20;
  auto a = make_data_plane(rt(), torch::Device(torch::kCPU), "a");
  auto b = make_data_plane(rt(), torch::Device(torch::kCPU), "b", small);
  ControlPlane control(rt(), "control");
  std::vector<double> seconds;
  const std::size_t best = fastest_plane({a.get(), b.get()}, control, 2 << 20, seconds);
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_GT(seconds[0], 0.0);
  EXPECT_GT(seconds[1], 0.0);
  EXPECT_EQ(best, pick_fastest(seconds));
}
