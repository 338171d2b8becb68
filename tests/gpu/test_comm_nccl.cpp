// The NCCL data plane on a real device: runs where a CUDA device and a CUDA LibTorch exist, skips
// with the reason elsewhere (here: no driver, and Debian's LibTorch is CPU-only).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/device_setup.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif
#ifdef SLIMTRAIN_TORCH_CUDA
#include <ATen/cuda/Sleep.h>
#endif

namespace {
using namespace slimtrain;

// Returns true when CUDA tensors can be reduced here; `why` says why not otherwise.
bool have_cuda(std::string& why) {
#ifdef SLIMTRAIN_HAVE_NCCL
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(rc);
    return false;
  }
  if (count == 0) {
    why = "no CUDA device on this machine";
    return false;
  }
  if (!torch::cuda::is_available()) {
    why = "this LibTorch was built without CUDA";
    return false;
  }
  return true;
#else
  why = "built without CUDA/NCCL";
  return false;
#endif
}

runtime::Runtime& rt() {
  static runtime::Runtime instance;
  return instance;
}

TEST(NcclDataPlane, ChunkedCollectivesOnDeviceTensors) {
  std::string why;
  if (!have_cuda(why)) GTEST_SKIP() << why;
  comm::ControlPlane control(rt(), "control");
  const auto binding = train::bind_device(rt(), control, "cuda", 0);
  const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(binding.index));
  comm::CommConfig config;
  config.chunk_bytes = 1024;  // several pieces in one NCCL group
  auto plane = comm::make_data_plane(rt(), device, "data", config);
  torch::Tensor t = torch::arange(3000, torch::dtype(torch::kFloat32).device(device));
  const torch::Tensor expected = t.clone();
  plane->all_reduce(t, comm::ReduceOp::sum, {30.0, "gpu"});
  plane->broadcast(t, 0, {30.0, "gpu"});
  // The compute stream waits for the collective on the device: no host synchronisation needed.
  auto work = plane->all_reduce_async(t, comm::ReduceOp::avg, {30.0, "gpu"});
  work->wait();
  EXPECT_TRUE(
      torch::equal(t.cpu(), expected.cpu()));  // one rank: sum, broadcast, avg are identities
  EXPECT_EQ(plane->ops_issued(), 3u);
  // Host memory never reaches NCCL.
  EXPECT_THROW(plane->all_reduce(torch::zeros({4}), comm::ReduceOp::sum), ConfigError);
}

// Issue 54: after the watchdog aborted a late operation, the plane's settle() (what a checkpoint
// waits for) throws its report, and every later operation throws: nothing reads the results of
// a reduction that did not complete. The NCCL stream starts the all-reduce only once the compute
// stream, kept busy here, reaches it: past its 50 ms deadline.
TEST(NcclDataPlane, ALateOperationFailsSettleAndEveryLaterCall) {
  std::string why;
  if (!have_cuda(why)) GTEST_SKIP() << why;
#ifndef SLIMTRAIN_TORCH_CUDA
  GTEST_SKIP() << "built against a LibTorch without CUDA";
#else
  comm::ControlPlane control(rt(), "control");
  const auto binding = train::bind_device(rt(), control, "cuda", 0);
  const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(binding.index));
  comm::CommConfig config;
  config.deadline.grace_s = 1;
  auto plane = comm::make_data_plane(rt(), device, "late", config);
  torch::Tensor t = torch::ones({1024}, torch::dtype(torch::kFloat32).device(device));
  plane->all_reduce(t, comm::ReduceOp::sum, {30.0, "warm"});  // the communicator connected
  at::cuda::sleep(1000000000);  // about half a second of the compute stream
  auto work = plane->all_reduce_async(t, comm::ReduceOp::sum, {0.05, "late"});
  EXPECT_THROW(plane->settle(), TimeoutError);
  EXPECT_THROW(plane->settle(), TimeoutError) << "the failure is kept";
  EXPECT_THROW(plane->all_reduce_async(t, comm::ReduceOp::sum)->wait(), CommError)
      << "the aborted communicator takes nothing more";
  EXPECT_THROW(plane->throw_if_failed(), TimeoutError);
  torch::cuda::synchronize();
#endif
}

}  // namespace
