// The optimizers (slimtrain/train/optimizers.hpp) stepped in pieces against LibTorch's own:
// bit-identical weights and state after several steps, for tensors larger than a piece, of a
// size no piece divides, smaller than a piece, and not contiguous (channels-last); stepped by the
// fused kernels (LibTorch 2.4+): within 1e-5 of the pieces, and a step with found_inf set changes
// nothing, its step counts taken back on the host by undo_step().
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/train/optimizers.hpp"

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

TEST(Optimizers, AdamWIsLibTorchsBitForBit) {
  for (const double decay : {0.0, 0.05}) {
    auto theirs_p = copies(make_params(1));
    auto ours_p = copies(make_params(1));
    const auto options =
        torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(decay);
    torch::optim::AdamW theirs(theirs_p, options);
    AdamW ours(ours_p, options, kChunk);
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

TEST(Optimizers, SgdIsLibTorchsBitForBitInEveryVariant) {
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
    SGD ours(ours_p, options, kChunk);
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

TEST(Optimizers, AParameterWithoutAGradientIsLeftAlone) {
  auto p = copies(make_params(3));
  const torch::Tensor before = p[1].detach().clone();
  AdamW adamw(p, torch::optim::AdamWOptions(0.1), kChunk);
  p[0].mutable_grad() = torch::ones_like(p[0]);
  adamw.step();
  EXPECT_TRUE(torch::equal(p[1], before));
  EXPECT_EQ(adamw.state().size(), 1u);
}

// Largest difference between two runs' weights, relative to each tensor's largest magnitude.
double relative_difference(const std::vector<torch::Tensor>& a,
                           const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, ((a[i] - b[i]).abs().max() / b[i].abs().max()).item<double>());
  return worst;
}

// Steps `ours` (fused) and `pieces` with the same gradients, `steps` times.
void step_both(torch::optim::Optimizer& fused, std::vector<torch::Tensor>& fused_p,
               torch::optim::Optimizer& pieces, std::vector<torch::Tensor>& pieces_p, int steps) {
  for (int s = 0; s < steps; ++s) {
    torch::manual_seed(200 + s);
    for (std::size_t i = 0; i < fused_p.size(); ++i) {
      const torch::Tensor g = torch::randn_like(fused_p[i]);
      fused_p[i].mutable_grad() = g.clone();
      pieces_p[i].mutable_grad() = g.clone();
    }
    fused.step();
    pieces.step();
  }
}

TEST(Optimizers, FusedKernelsFollowThePiecesWithin1e5) {
  if (!fused_optimizers_available())
    GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no fused optimizer kernels (2.4 on)";
  {
    auto fused_p = copies(make_params(5)), pieces_p = copies(make_params(5));
    const auto options = torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).weight_decay(0.05);
    AdamW fused(fused_p, options, kChunk), pieces(pieces_p, options, kChunk);
    fused.use_fused(true);
    step_both(fused, fused_p, pieces, pieces_p, 6);
    EXPECT_LT(relative_difference(fused_p, pieces_p), 1e-5) << "AdamW";
    for (std::size_t i = 0; i < fused_p.size(); ++i)
      EXPECT_EQ(static_cast<torch::optim::AdamWParamState&>(
                    *fused.state().at(ckpt::optimizer_state_key(fused_p[i])))
                    .step(),
                6);
  }
  for (const bool nesterov : {false, true}) {
    auto fused_p = copies(make_params(6)), pieces_p = copies(make_params(6));
    const auto options =
        torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-3).nesterov(nesterov);
    SGD fused(fused_p, options, kChunk), pieces(pieces_p, options, kChunk);
    fused.use_fused(true);
    step_both(fused, fused_p, pieces, pieces_p, 5);
    EXPECT_LT(relative_difference(fused_p, pieces_p), 1e-5) << "SGD, nesterov " << nesterov;
  }
}

TEST(Optimizers, AStepWithFoundInfSetChangesNothing) {
  if (!fused_optimizers_available())
    GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no fused optimizer kernels (2.4 on)";
  auto p = copies(make_params(7));
  AdamW adamw(p, torch::optim::AdamWOptions(1e-2).weight_decay(0.1), kChunk);
  adamw.use_fused(true);
  const torch::Tensor found = torch::zeros({1});
  adamw.set_found_inf(found);
  for (auto& t : p) t.mutable_grad() = torch::ones_like(t);
  adamw.step();  // a normal step
  std::vector<torch::Tensor> before, moments;
  for (auto& t : p) before.push_back(t.detach().clone());
  const auto& state = static_cast<torch::optim::AdamWParamState&>(
      *adamw.state().at(ckpt::optimizer_state_key(p[0])));
  const torch::Tensor avg = state.exp_avg().clone();
  found.fill_(1);  // set on the device, between steps: the host reads nothing
  adamw.step();
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_TRUE(torch::equal(p[i], before[i]));
  EXPECT_TRUE(torch::equal(state.exp_avg(), avg));
  EXPECT_EQ(state.step(), 2);  // the host's count, until it learns of the skip
  adamw.undo_step();
  EXPECT_EQ(state.step(), 1);
  // The next step is the second one on the device too: equal to an optimizer that never skipped.
  found.fill_(0);
  auto q = copies(make_params(7));
  AdamW plain(q, torch::optim::AdamWOptions(1e-2).weight_decay(0.1), kChunk);
  for (int s = 0; s < 2; ++s) {
    for (auto& t : q) t.mutable_grad() = torch::ones_like(t);
    plain.step();
  }
  adamw.step();
  EXPECT_LT(relative_difference(p, q), 1e-5);

  auto r = copies(make_params(8));
  SGD sgd(r, torch::optim::SGDOptions(0.1).momentum(0.9), kChunk);
  sgd.use_fused(true);
  sgd.set_found_inf(torch::ones({1}));
  std::vector<torch::Tensor> r_before;
  for (auto& t : r) {
    r_before.push_back(t.detach().clone());
    t.mutable_grad() = torch::ones_like(t);
  }
  sgd.step();
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_TRUE(torch::equal(r[i], r_before[i]));
}

}  // namespace
}  // namespace slimtrain::train
