#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "same_bytes.hpp"
#include "slimtrain/model/max_pool.hpp"

using slimtrain::model::max_pool_2x2;
using slimtrain::model::max_pool_2x2_own_loop;

namespace {

using slimtrain::testing::same_bytes;  // bit for bit: -0.0 and NaN payloads count

// Values with the cases the window rule decides: flat regions (ties), -inf, -0.0 and NaN.
torch::Tensor awkward_input(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  torch::manual_seed(7);
  auto x = torch::randn({n, c, h, w});
  x.index_put_({torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(0, 4),
                torch::indexing::Slice(0, 4)},
               0.5);  // whole windows of equal values
  auto flat = x.view(-1);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t i = 0; i + 40 < flat.numel(); i += 37) {
    flat[i] = (i / 37) % 3 == 0 ? -inf : (i / 37) % 3 == 1 ? nan : -0.0f;
  }
  return x;
}

void expect_like_libtorch(const torch::Tensor& input) {
  auto ours_in = input.clone().requires_grad_();
  auto ref_in = input.clone().requires_grad_();
  const auto ours = max_pool_2x2(ours_in);
  const auto ref = torch::max_pool2d(ref_in, 2);
  EXPECT_TRUE(same_bytes(ours, ref)) << "forward differs for " << input.sizes();
  torch::manual_seed(11);
  auto grad = torch::randn(ref.sizes());
  grad.view(-1).slice(0, 0, grad.numel(), 5).fill_(-0.0);  // -0.0 must arrive as LibTorch's sum
  ours.backward(grad);
  ref.backward(grad);
  EXPECT_TRUE(same_bytes(ours_in.grad(), ref_in.grad()))
      << "gradient differs for " << input.sizes();
}

}  // namespace

TEST(MaxPool2x2, OwnLoopEqualsLibTorchToTheBit) {
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{
           {64, 32, 28, 28}, {3, 5, 7, 9}, {2, 1, 2, 2}, {1, 4, 5, 4}, {2, 3, 4, 3}}) {
    const auto x = awkward_input(shape[0], shape[1], shape[2], shape[3]);
    ASSERT_TRUE(max_pool_2x2_own_loop(x));
    expect_like_libtorch(x);
  }
}

TEST(MaxPool2x2, EvaluationWithoutGradientsGivesTheSameValues) {
  const auto x = awkward_input(4, 8, 14, 14);
  torch::Tensor ours;
  {
    c10::InferenceMode guard;
    ours = max_pool_2x2(x);
  }
  EXPECT_TRUE(same_bytes(ours, torch::max_pool2d(x, 2)));
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(same_bytes(max_pool_2x2(x.clone().requires_grad_()), torch::max_pool2d(x, 2)));
}

TEST(MaxPool2x2, OtherLayoutsAndTypesGoToLibTorch) {
  const auto x = awkward_input(2, 8, 6, 6);
  const auto channels_last = x.contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_FALSE(max_pool_2x2_own_loop(channels_last));
  EXPECT_FALSE(max_pool_2x2_own_loop(x.to(torch::kDouble)));
  EXPECT_FALSE(max_pool_2x2_own_loop(x.transpose(2, 3)));
  EXPECT_FALSE(max_pool_2x2_own_loop(torch::randn({2, 8, 1, 6})));
  EXPECT_TRUE(same_bytes(max_pool_2x2(channels_last), torch::max_pool2d(channels_last, 2)));
  expect_like_libtorch(x.to(torch::kDouble));
}

TEST(MaxPool2x2, MaxPoolLibTorchSendsEveryCallToLibTorch) {
  const auto x = awkward_input(2, 4, 6, 6);
  ASSERT_TRUE(max_pool_2x2_own_loop(x));
  slimtrain::model::use_own_max_pool_loop(false);  // --max-pool libtorch
  EXPECT_FALSE(max_pool_2x2_own_loop(x));
  expect_like_libtorch(x);
  slimtrain::model::use_own_max_pool_loop(true);
  EXPECT_TRUE(max_pool_2x2_own_loop(x));
}
