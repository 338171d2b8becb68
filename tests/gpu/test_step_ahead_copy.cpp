// The step-ahead batch copy (train/step_ahead_copy.hpp) on a real GPU: the step's stream is kept
// busy while the host frees what its queued kernels still read and fetches the next batch, as
// DeviceBatches does; every batch the step takes must hold what the host copied. The copy that
// allocated on the step's stream and wrote from the side stream (issue 54) fails this: the
// allocator handed it a block a queued fill was about to overwrite. Needs a GPU to fail; the
// unit tier checks the same order on a fake (tests/unit/test_step_ahead_copy.cpp).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "slimtrain/train/step_ahead_copy.hpp"
#ifdef SLIMTRAIN_TORCH_CUDA
#include <ATen/cuda/Sleep.h>
#endif

namespace {
using namespace slimtrain;

#ifdef SLIMTRAIN_TORCH_CUDA
data::Batch host_batch(int i, std::int64_t n) {
  const auto pinned = torch::TensorOptions().pinned_memory(true);
  data::Batch b;
  b.x = torch::full({n}, static_cast<float>(i), pinned.dtype(torch::kFloat32));
  b.y = torch::full({n / 4}, static_cast<std::int64_t>(i), pinned.dtype(torch::kLong));
  return b;
}
#endif

TEST(StepAheadCopyGpu, EveryBatchArrivesAsCopiedWhileTheStepIsBusy) {
#ifndef SLIMTRAIN_TORCH_CUDA
  GTEST_SKIP() << "built against a LibTorch without CUDA";
#else
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const torch::Device device(torch::kCUDA, 0);
  const auto streams = train::device_copy_streams(device);
  constexpr int kSteps = 200;
  constexpr std::int64_t kElements = 1 << 20;  // 4 MiB: the temporaries below match its blocks
  std::vector<torch::Tensor> wrong;            // per step, on the device: elements not as copied
  train::CopyInFlight ahead = train::start_copy(*streams, host_batch(0, kElements));
  for (int i = 0; i < kSteps; ++i) {
    data::Batch b = train::take_copy(*streams, std::move(ahead));
    ahead = train::start_copy(*streams, host_batch(i + 1, kElements));  // fetched at once
    // The step: busy for a while, then it reads its batch; a temporary of the batch's size is
    // written after the wait and freed by the host at once (its kernels still queued).
    at::cuda::sleep(200000);
    torch::Tensor temporary = torch::empty_like(b.x);
    temporary.fill_(-1.0f);
    temporary = torch::Tensor();
    at::cuda::sleep(100000);
    wrong.push_back((b.x != static_cast<float>(i)).sum() + (b.y != i).sum());
  }
  const torch::Tensor total = torch::stack(wrong).cpu();
  for (int i = 0; i < kSteps; ++i)
    EXPECT_EQ(total[i].item<std::int64_t>(), 0) << "step " << i << "'s batch was overwritten";
#endif
}

}  // namespace
