#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "slimtrain/core/error.hpp"
#include "slimtrain/train/optim.hpp"

using namespace slimtrain;
using train::OptimConfig;

namespace {

torch::Tensor param(std::vector<double> v) {
  return torch::tensor(v, torch::kDouble).requires_grad_(true);
}

void set_grad(torch::Tensor& p, std::vector<double> g) {
  p.mutable_grad() = torch::tensor(g, torch::kDouble);
}

std::string config_error_of(const OptimConfig& config) {
  try {
    train::make_optimizer(config, {param({1.0})});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST(Optim, SgdMomentumAndWeightDecayTwoStepsByHand) {
  OptimConfig config;
  config.name = "sgd";
  config.lr = 0.1;
  config.momentum = 0.9;
  config.weight_decay = 0.01;
  auto w = param({1.0, -2.0});
  auto opt = train::make_optimizer(config, {w});

  // Step 1: d = g + wd*w, buffer = d, w -= lr*buffer.
  set_grad(w, {0.5, 1.0});
  opt->step();
  const double d1[2] = {0.5 + 0.01 * 1.0, 1.0 + 0.01 * -2.0};
  const double w1[2] = {1.0 - 0.1 * d1[0], -2.0 - 0.1 * d1[1]};
  EXPECT_NEAR(w[0].item<double>(), w1[0], 1e-15);
  EXPECT_NEAR(w[1].item<double>(), w1[1], 1e-15);

  // Step 2: buffer = momentum*buffer + d, w -= lr*buffer.
  set_grad(w, {-0.25, 0.0});
  opt->step();
  const double d2[2] = {-0.25 + 0.01 * w1[0], 0.0 + 0.01 * w1[1]};
  EXPECT_NEAR(w[0].item<double>(), w1[0] - 0.1 * (0.9 * d1[0] + d2[0]), 1e-15);
  EXPECT_NEAR(w[1].item<double>(), w1[1] - 0.1 * (0.9 * d1[1] + d2[1]), 1e-15);
}

TEST(Optim, SgdNesterovLooksAhead) {
  OptimConfig config;
  config.lr = 0.1;
  config.momentum = 0.5;
  config.nesterov = true;
  auto w = param({1.0});
  auto opt = train::make_optimizer(config, {w});
  set_grad(w, {2.0});
  opt->step();  // buffer = 2, step = g + momentum*buffer = 3
  EXPECT_NEAR(w.item<double>(), 1.0 - 0.1 * 3.0, 1e-15);
}

TEST(Optim, AdamWDecoupledWeightDecayTwoStepsByHand) {
  OptimConfig config;
  config.name = "adamw";
  config.lr = 0.01;
  config.weight_decay = 0.1;
  config.beta1 = 0.9;
  config.beta2 = 0.99;
  config.eps = 1e-8;
  auto w = param({1.0, -3.0});
  auto opt = train::make_optimizer(config, {w});

  const double g1[2] = {0.2, -4.0}, g2[2] = {-0.1, 1.0};
  double expected[2], m[2], v[2];
  set_grad(w, {g1[0], g1[1]});
  opt->step();
  for (int i = 0; i < 2; ++i) {
    const double w0 = i == 0 ? 1.0 : -3.0;
    m[i] = (1 - 0.9) * g1[i];
    v[i] = (1 - 0.99) * g1[i] * g1[i];
    // Decay first (decoupled), then the bias-corrected Adam step.
    expected[i] = w0 * (1 - 0.01 * 0.1) -
                  0.01 / (1 - 0.9) * m[i] / (std::sqrt(v[i]) / std::sqrt(1 - 0.99) + 1e-8);
    EXPECT_NEAR(w[i].item<double>(), expected[i], 1e-12) << i;
  }
  set_grad(w, {g2[0], g2[1]});
  opt->step();
  for (int i = 0; i < 2; ++i) {
    m[i] = 0.9 * m[i] + (1 - 0.9) * g2[i];
    v[i] = 0.99 * v[i] + (1 - 0.99) * g2[i] * g2[i];
    const double bc1 = 1 - 0.9 * 0.9, bc2 = 1 - 0.99 * 0.99;
    expected[i] = expected[i] * (1 - 0.01 * 0.1) -
                  0.01 / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + 1e-8);
    EXPECT_NEAR(w[i].item<double>(), expected[i], 1e-12) << i;
  }
}

TEST(Optim, SetLearningRateTakesEffect) {
  OptimConfig config;
  config.momentum = 0.0;
  auto w = param({1.0});
  auto opt = train::make_optimizer(config, {w});
  train::set_learning_rate(*opt, 0.5);
  set_grad(w, {1.0});
  opt->step();
  EXPECT_NEAR(w.item<double>(), 0.5, 1e-15);  // 1 - 0.5 * 1, not the configured 0.05

  // AdamW's first step moves each weight by about lr whatever the gradient's size.
  config.name = "adamw";
  auto a = param({1.0});
  auto adam = train::make_optimizer(config, {a});
  train::set_learning_rate(*adam, 1e-4);
  set_grad(a, {3.0});
  adam->step();
  EXPECT_NEAR(a.item<double>(), 1.0 - 1e-4, 1e-9);
}

TEST(Optim, BadConfigsNameTheOption) {
  OptimConfig c;
  c.name = "lamb";
  EXPECT_NE(config_error_of(c).find("--optimizer: unknown optimizer 'lamb'"), std::string::npos);
  c = {};
  c.lr = 0;
  EXPECT_EQ(config_error_of(c).rfind("--lr", 0), 0u);
  c = {};
  c.momentum = 1.0;
  EXPECT_EQ(config_error_of(c).rfind("--momentum", 0), 0u);
  c = {};
  c.weight_decay = -1;
  EXPECT_EQ(config_error_of(c).rfind("--weight-decay", 0), 0u);
  c = {};
  c.momentum = 0;
  c.nesterov = true;
  EXPECT_EQ(config_error_of(c).rfind("--nesterov", 0), 0u);
  c = {};
  c.name = "adamw";
  c.beta2 = 1.0;
  EXPECT_EQ(config_error_of(c).rfind("--beta2", 0), 0u);
  c.beta2 = 0.999;
  c.eps = 0;
  EXPECT_EQ(config_error_of(c).rfind("--eps", 0), 0u);
}

TEST(Optim, ClipGradNormMatchesLibTorchAndLeavesSmallGradientsAlone) {
  auto make = [](double scale) {
    std::vector<torch::Tensor> params;
    for (int k = 0; k < 3; ++k) {
      torch::Tensor p = torch::zeros({4, k + 2}, torch::requires_grad());
      p.mutable_grad() = torch::arange(4.0 * (k + 2)).reshape({4, k + 2}) * scale - 3.0;
      params.push_back(p);
    }
    return params;
  };
  auto ours = make(1.0), theirs = make(1.0);
  slimtrain::train::clip_grad_norm(ours, 2.5);
  torch::nn::utils::clip_grad_norm_(theirs, 2.5);
  for (std::size_t k = 0; k < ours.size(); ++k)
    EXPECT_TRUE(torch::allclose(ours[k].grad(), theirs[k].grad(), 1e-6, 1e-7)) << "tensor " << k;
  double total = 0;
  for (const auto& p : ours) total += p.grad().pow(2).sum().item<double>();
  EXPECT_NEAR(std::sqrt(total), 2.5, 1e-4);
  auto small = make(1e-3), before = make(1e-3);
  for (auto& p : small) p.mutable_grad() = p.grad() * 1e-3;
  for (auto& p : before) p.mutable_grad() = p.grad() * 1e-3;
  slimtrain::train::clip_grad_norm(small, 1e3);
  for (std::size_t k = 0; k < small.size(); ++k)
    EXPECT_TRUE(torch::equal(small[k].grad(), before[k].grad()))
        << "scaled although below the limit";
}
