// The gpu tier: runs for real where a CUDA device exists, skips with the reason everywhere else.
#include <gtest/gtest.h>

#include <string>

#include "slimtrain/version.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

namespace {
// Returns the number of usable devices, or -1 with `why` set when none can be used.
int usable_devices(std::string& why) {
#ifdef SLIMTRAIN_HAVE_NCCL
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(rc);
    return -1;
  }
  if (count == 0) {
    why = "no CUDA device on this machine";
    return -1;
  }
  return count;
#else
  why = "built without CUDA/NCCL (SLIMTRAIN_WITH_NCCL=OFF or not found)";
  return -1;
#endif
}
}  // namespace

TEST(Gpu, DeviceAllocatesAndCopies) {
  std::string why;
  if (usable_devices(why) < 0) GTEST_SKIP() << why;
#ifdef SLIMTRAIN_HAVE_NCCL
  float host[4] = {1, 2, 3, 4}, back[4] = {};
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, sizeof host), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back, device, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(device);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], host[i]);
#endif
}

TEST(Gpu, NcclVersionMatchesHeader) {
  std::string why;
  if (usable_devices(why) < 0) GTEST_SKIP() << why;
#ifdef SLIMTRAIN_HAVE_NCCL
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
#endif
}
