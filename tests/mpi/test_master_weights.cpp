// --weights bf16 (master_weights.hpp): bf16 parameters whose gradients are averaged in float32
// buckets that are the masters' .grad, micro-batches added up in float32; the optimizer steps the
// masters and the weights are their rounding; a load through as_float32 reaches the masters.
#include <gtest/gtest.h>

#include "mpi_runtime.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/master_weights.hpp"
#include "slimtrain/train/optim.hpp"

namespace st = slimtrain::train;
using slimtrain_test::rt;

namespace {

std::vector<torch::Tensor> made_weights() {
  torch::manual_seed(3);  // the same on every rank
  return {torch::randn({16, 8}).requires_grad_(), torch::randn({16}).requires_grad_(),
          torch::randn({4, 16}).requires_grad_()};
}

torch::Tensor loss_of(const std::vector<torch::Tensor>& w, const torch::Tensor& x) {
  return torch::relu(torch::addmm(w[1], x, w[0].t())).mm(w[2].t()).square().mean();
}

bool same_values(const torch::Tensor& a, const torch::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.equal(b);
}

void steps_as_by_hand(bool overlap) {
  auto plane = slimtrain::comm::make_data_plane(rt(), torch::Device(torch::kCPU), "data", {});
  std::vector<torch::Tensor> params = made_weights();
  std::vector<torch::Tensor> reference;  // float32, stepped with the expected gradients
  for (const torch::Tensor& p : params) reference.push_back(p.detach().clone());
  st::MasterWeights masters(params);
  for (const torch::Tensor& p : params) ASSERT_EQ(p.scalar_type(), torch::kBFloat16);
  std::vector<std::int64_t> numels;
  for (const torch::Tensor& p : params) numels.push_back(p.numel());
  const st::FlatLayout layout(numels, 256, 1);  // several buckets, one parameter split from others
  st::GradientSync sync(params, *plane, layout, st::ShardMode::none, overlap,
                        st::GradCompression::none);
  sync.set_master_grads(masters.masters());
  st::OptimConfig oc;
  oc.lr = 0.1;
  oc.momentum = 0.9;
  auto optimizer = st::make_optimizer(oc, masters.masters());
  auto by_hand = st::make_optimizer(oc, reference);
  torch::manual_seed(100 + rt().rank());  // each rank its own data
  for (int step = 0; step < 3; ++step) {
    std::vector<torch::Tensor> expected(params.size());
    sync.prepare();
    for (int micro = 0; micro < 2; ++micro) {
      const torch::Tensor x = torch::randn({5, 8}).to(torch::kBFloat16);
      // The same bf16 gradients from copies, widened and added in float32.
      std::vector<torch::Tensor> copies;
      for (const torch::Tensor& p : params) copies.push_back(p.detach().clone().requires_grad_());
      loss_of(copies, x).backward();
      for (std::size_t k = 0; k < params.size(); ++k) {
        const torch::Tensor g = copies[k].grad().to(torch::kFloat32);
        expected[k] = micro == 0 ? g : expected[k] + g;
      }
      sync.set_accumulating(micro == 0);
      loss_of(params, x).backward();
    }
    sync.finish();
    for (std::size_t k = 0; k < params.size(); ++k) {
      EXPECT_FALSE(params[k].grad().defined()) << "a bf16 gradient kept beside its bucket";
      plane->all_reduce(expected[k], slimtrain::comm::ReduceOp::avg);
      ASSERT_TRUE(same_values(masters.masters()[k].grad(), expected[k]))
          << "step " << step << " parameter " << k << ": not the float32 average";
      reference[k].mutable_grad() = expected[k];
    }
    optimizer->step();
    masters.publish();
    by_hand->step();
    // A checkpoint's copy between steps: the gradient hooks must survive it.
    masters.as_float32([] {});
    for (std::size_t k = 0; k < params.size(); ++k) {
      ASSERT_TRUE(same_values(masters.masters()[k], reference[k]))
          << "step " << step << " master " << k;
      ASSERT_TRUE(same_values(params[k].detach(), reference[k].to(torch::kBFloat16)))
          << "step " << step << " weight " << k << " is not its master's rounding";
    }
  }
}

}  // namespace

TEST(MasterWeights, AveragesInFloat32AndStepsTheMastersWithOverlap) {
  steps_as_by_hand(true);
}
TEST(MasterWeights, AveragesInFloat32AndStepsTheMastersWithoutOverlap) {
  steps_as_by_hand(false);
}

// A checkpoint reads, and a resume writes, the float32 values through as_float32.
TEST(MasterWeights, AsFloat32ShowsAndTakesTheMasters) {
  std::vector<torch::Tensor> params = made_weights();
  const torch::Tensor first = params[0].detach().clone();
  st::MasterWeights masters(params);
  const torch::Tensor loaded = first + 1e-4;  // below bf16's resolution near 1
  masters.as_float32([&] {
    ASSERT_TRUE(same_values(params[0].detach(), first))
        << "the checkpoint would see the bf16 rounding";
    torch::NoGradGuard no_grad;
    params[0].copy_(loaded);                 // load_into writes in place
    params[1].set_data(torch::zeros({16}));  // or a load that gives new memory
  });
  EXPECT_TRUE(same_values(masters.masters()[0], loaded));
  EXPECT_TRUE(same_values(params[0].detach(), loaded.to(torch::kBFloat16)));
  EXPECT_TRUE(same_values(masters.masters()[1], torch::zeros({16})));
  EXPECT_EQ(params[1].scalar_type(), torch::kBFloat16);
  // A failing load leaves the weights bf16 all the same.
  EXPECT_THROW(masters.as_float32([] { throw std::runtime_error("disk"); }), std::runtime_error);
  for (const torch::Tensor& p : params) EXPECT_EQ(p.scalar_type(), torch::kBFloat16);
}
