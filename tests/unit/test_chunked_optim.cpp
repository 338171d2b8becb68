// The optimizers stepped in pieces (slimtrain/train/chunked_optim.hpp) against LibTorch's own:
// bit-identical weights and state after several steps, for tensors larger than a piece, of a
// size no piece divides, smaller than a piece, and not contiguous (channels-last).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/train/chunked_optim.hpp"

namespace slimtrain::train {
namespace {

constexpr std::int64_t kChunk = 1000;  // small, so most tensors cross several pieces

std::vector<torch::Tensor> make_params(std::uint64_t seed) {
  torch::manual_seed(seed);
  return {torch::randn({4096}), torch::randn({37, 101}), torch::randn({17}),
          torch::randn({8, 3, 5, 5}).contiguous(torch::MemoryFormat::ChannelsLast)};
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) out.push_back(p.clone().requires_grad_(true));
  return out;
}

// Steps both optimizers `steps` times with the same random gradients; every weight and state
// tensor must end bit-identical.
void expect_same(torch::optim::Optimizer& theirs, std::vector<torch::Tensor>& their_params,
                 torch::optim::Optimizer& ours, std::vector<torch::Tensor>& our_params, int steps) {
  for (int s = 0; s < steps; ++s) {
    torch::manual_seed(100 + s);
    for (std::size_t i = 0; i < their_params.size(); ++i) {
      const torch::Tensor g = torch::randn_like(their_params[i]);
      their_params[i].mutable_grad() = g.clone();
      our_params[i].mutable_grad() = g.clone();
    }
    theirs.step();
    ours.step();
  }
  for (std::size_t i = 0; i < their_params.size(); ++i)
    EXPECT_TRUE(torch::equal(their_params[i], our_params[i])) << "parameter " << i;
  ASSERT_EQ(theirs.state().size(), ours.state().size());
}

TEST(ChunkedOptim, AdamWIsLibTorchsBitForBit) {
  for (const double decay : {0.0, 0.05}) {
    auto theirs_p = copies(make_params(1));
    auto ours_p = copies(make_params(1));
    const auto options =
        torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(decay);
    torch::optim::AdamW theirs(theirs_p, options);
    ChunkedAdamW ours(ours_p, options, kChunk);
    expect_same(theirs, theirs_p, ours, ours_p, 5);
    for (std::size_t i = 0; i < theirs_p.size(); ++i) {
      const auto key = slimtrain::ckpt::optimizer_state_key(theirs_p[i]);
      const auto our_key = slimtrain::ckpt::optimizer_state_key(ours_p[i]);
      const auto& a = static_cast<torch::optim::AdamWParamState&>(*theirs.state().at(key));
      const auto& b = static_cast<torch::optim::AdamWParamState&>(*ours.state().at(our_key));
      EXPECT_EQ(a.step(), b.step());
      EXPECT_TRUE(torch::equal(a.exp_avg(), b.exp_avg()));
      EXPECT_TRUE(torch::equal(a.exp_avg_sq(), b.exp_avg_sq()));
    }
  }
}

TEST(ChunkedOptim, SgdIsLibTorchsBitForBitInEveryVariant) {
  struct Variant {
    double momentum, decay;
    bool nesterov;
  };
  for (const Variant v :
       {Variant{0, 0, false}, Variant{0, 1e-3, false}, Variant{0.9, 0, false},
        Variant{0.9, 1e-3, false}, Variant{0.9, 0, true}, Variant{0.9, 1e-3, true}}) {
    SCOPED_TRACE("momentum " + std::to_string(v.momentum) + " decay " + std::to_string(v.decay) +
                 (v.nesterov ? " nesterov" : ""));
    auto theirs_p = copies(make_params(2));
    auto ours_p = copies(make_params(2));
    const auto options = torch::optim::SGDOptions(0.05)
                             .momentum(v.momentum)
                             .weight_decay(v.decay)
                             .nesterov(v.nesterov);
    torch::optim::SGD theirs(theirs_p, options);
    ChunkedSGD ours(ours_p, options, kChunk);
    expect_same(theirs, theirs_p, ours, ours_p, 4);
    for (std::size_t i = 0; i < theirs_p.size() && v.momentum != 0; ++i) {
      const auto& a = static_cast<torch::optim::SGDParamState&>(
          *theirs.state().at(slimtrain::ckpt::optimizer_state_key(theirs_p[i])));
      const auto& b = static_cast<torch::optim::SGDParamState&>(
          *ours.state().at(slimtrain::ckpt::optimizer_state_key(ours_p[i])));
      EXPECT_TRUE(torch::equal(a.momentum_buffer(), b.momentum_buffer()));
    }
  }
}

TEST(ChunkedOptim, AParameterWithoutAGradientIsLeftAlone) {
  auto p = copies(make_params(3));
  const torch::Tensor before = p[1].detach().clone();
  ChunkedAdamW adamw(p, torch::optim::AdamWOptions(0.1), kChunk);
  p[0].mutable_grad() = torch::ones_like(p[0]);
  adamw.step();
  EXPECT_TRUE(torch::equal(p[1], before));
  EXPECT_EQ(adamw.state().size(), 1u);
}

}  // namespace
}  // namespace slimtrain::train
