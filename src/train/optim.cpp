#include "slimtrain/train/optim.hpp"

#include <torch/version.h>

#include <cmath>

#include "slimtrain/core/error.hpp"
#include "slimtrain/train/optimizers.hpp"

namespace slimtrain::train {
namespace {

void require(bool ok, const char* option, double value, const char* rule) {
  if (!ok) SLIMTRAIN_THROW(ConfigError, option, ": ", value, " ", rule);
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimConfig& config,
                                                        std::vector<torch::Tensor> params) {
  require(config.lr > 0 && std::isfinite(config.lr), "--lr", config.lr, "must be positive");
  require(config.weight_decay >= 0 && std::isfinite(config.weight_decay), "--weight-decay",
          config.weight_decay, "must be >= 0");
  if (config.name == "sgd") {
    require(config.momentum >= 0 && config.momentum < 1, "--momentum", config.momentum,
            "is outside [0, 1)");
    if (config.nesterov && config.momentum == 0) {
      SLIMTRAIN_THROW(ConfigError, "--nesterov needs --momentum > 0");
    }
    auto options = torch::optim::SGDOptions(config.lr)
                       .momentum(config.momentum)
                       .weight_decay(config.weight_decay)
                       .nesterov(config.nesterov);
    return std::make_unique<SGD>(std::move(params), options);
  }
  if (config.name == "adamw") {
    require(config.beta1 >= 0 && config.beta1 < 1, "--beta1", config.beta1, "is outside [0, 1)");
    require(config.beta2 >= 0 && config.beta2 < 1, "--beta2", config.beta2, "is outside [0, 1)");
    require(config.eps > 0, "--eps", config.eps, "must be positive");
    if (config.nesterov) SLIMTRAIN_THROW(ConfigError, "--nesterov applies to --optimizer sgd only");
    auto options = torch::optim::AdamWOptions(config.lr)
                       .betas({config.beta1, config.beta2})
                       .eps(config.eps)
                       .weight_decay(config.weight_decay);
    return std::make_unique<AdamW>(std::move(params), options);
  }
  SLIMTRAIN_THROW(ConfigError, "--optimizer: unknown optimizer '", config.name,
                  "' (choose sgd or adamw)");
}

std::uint64_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer) {
  std::uint64_t bytes = 0;
  auto add = [&bytes](const torch::Tensor& t) {
    if (t.defined()) bytes += static_cast<std::uint64_t>(t.numel()) * t.element_size();
  };
  for (const auto& entry : optimizer.state()) {
    const torch::optim::OptimizerParamState* state = entry.second.get();
    if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(state)) {
      add(sgd->momentum_buffer());
    } else if (const auto* adamw = dynamic_cast<const torch::optim::AdamWParamState*>(state)) {
      add(adamw->exp_avg());
      add(adamw->exp_avg_sq());
      add(adamw->max_exp_avg_sq());
    }
  }
  return bytes;
}

torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return torch::zeros({});
#if TORCH_VERSION_MAJOR >= 2
  if (!grads.front().is_cpu()) {
    // A GPU's step: one kernel for every gradient's norm, one for their scaling.
    const torch::Tensor total = torch::stack(at::_foreach_norm(grads, 2)).norm(2);
    at::_foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp_max(1.0));
    return total;
  }
#endif
  // On a CPU a launch costs nothing to speak of, and LibTorch's own clip_grad_norm_ is matched
  // bit for bit.
  std::vector<torch::Tensor> norms;
  for (const torch::Tensor& g : grads) norms.push_back(g.norm(2));
  const torch::Tensor total = torch::stack(norms).norm(2);
  const torch::Tensor scale = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (const torch::Tensor& g : grads) g.mul_(scale);
  return total;
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace slimtrain::train
