// The NCCL backend on a real device: runs where a CUDA device exists, skips with the reason here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "slimtrain/comm/nccl_communicator.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"
#endif

namespace {
// Returns true when a device is usable; `why` says why not otherwise.
bool have_device(std::string& why) {
#ifdef SLIMTRAIN_HAVE_NCCL
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(rc);
    return false;
  }
  if (count == 0) why = "no CUDA device on this machine";
  return count > 0;
#else
  why = "built without CUDA/NCCL";
  return false;
#endif
}
}  // namespace

TEST(NcclComm, SingleRankCollectivesOnDevice) {
  std::string why;
  if (!have_device(why)) GTEST_SKIP() << why;
#ifdef SLIMTRAIN_HAVE_NCCL
  using namespace slimtrain;
  static runtime::Runtime rt;
  const auto binding = runtime::bind_device(rt, "cuda", 0);
  EXPECT_EQ(binding.index, rt.local_rank());
  comm::CommConfig config;
  config.chunk_bytes = 1024;  // several pieces
  comm::NcclCommunicator nccl(rt, "train", config);
  std::vector<float> host(3000);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), host.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  nccl.all_reduce(device, host.size(), comm::DType::f32, comm::ReduceOp::sum, {30.0, "gpu"});
  nccl.broadcast(device, host.size(), comm::DType::f32, 0, {30.0, "gpu"});
  nccl.barrier({30.0, ""});
  EXPECT_TRUE(nccl.agree(true, {30.0, ""}));
  EXPECT_FALSE(nccl.agree(false, {30.0, ""}));
  std::vector<float> back(host.size());
  ASSERT_EQ(cudaMemcpy(back.data(), device, back.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(device);
  EXPECT_EQ(back, host);  // one rank: sum and broadcast are identities
#endif
}
