// World size 1 with no launcher: the Runtime initialises MPI itself and every collective works.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <numeric>
#include <vector>

#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/comm/tensor_ops.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"
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
  auto comm = make_communicator(rt(), "train", "cpu", config);
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

TEST(SingleRank, FactoryRejectsUnknownDevices) {
  EXPECT_THROW(make_communicator(rt(), "x", "tpu"), ConfigError);
#ifndef SLIMTRAIN_HAVE_NCCL
  EXPECT_THROW(make_communicator(rt(), "x", "cuda"), ConfigError);
#endif
}

TEST(SingleRank, TensorAdapter) {
  auto comm = make_mpi_communicator(rt(), "train");
  torch::Tensor t = torch::arange(10, torch::kFloat);
  all_reduce(*comm, t, ReduceOp::sum);
  EXPECT_TRUE(torch::equal(t, torch::arange(10, torch::kFloat)));
  auto work = all_reduce_async(*comm, t, ReduceOp::max);
  work->wait();
  EXPECT_TRUE(work->completed());
  broadcast(*comm, t, 0);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kHalf)), DType::f16);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kBFloat16)), DType::bf16);
  EXPECT_EQ(dtype_of(torch::zeros({1}, torch::kLong)), DType::i64);
  EXPECT_THROW(dtype_of(torch::zeros({1}, torch::kInt)), ConfigError);
  torch::Tensor strided = torch::zeros({4, 4}).t();
  EXPECT_THROW(all_reduce(*comm, strided, ReduceOp::sum), ConfigError);
}

TEST(SingleRank, BindCpuDevice) {
  const runtime::DeviceBinding b = runtime::bind_device(rt(), "cpu", 0);
  EXPECT_EQ(b.kind, "cpu");
  EXPECT_GE(b.threads, 1);
  EXPECT_EQ(at::get_num_threads(), b.threads);
  EXPECT_EQ(runtime::bind_device(rt(), "cpu", 1).threads, 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_THROW(runtime::bind_device(rt(), "gpu", 0), ConfigError);
  // No GPU here (or no CUDA build): cuda must be refused with a clear error, never crash.
  int devices = 0;
#ifdef SLIMTRAIN_HAVE_NCCL
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
#endif
  if (devices == 0) {
    EXPECT_THROW(runtime::bind_device(rt(), "cuda", 0), ConfigError);
  }
}
