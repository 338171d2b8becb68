#include "slimtrain/train/master_weights.hpp"

#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cstdio>

#include "slimtrain/core/detail/concat.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/model/bf16_weights.hpp"
#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

MasterWeights::MasterWeights(std::vector<torch::Tensor> params,
                             const std::vector<torch::Tensor>& float32)
    : params_(std::move(params)) {
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    torch::Tensor& p = params_[k];
    const bool kept = std::any_of(float32.begin(), float32.end(),
                                  [&](const torch::Tensor& t) { return t.is_same(p); });
    kept_.push_back(kept ? 1 : 0);
    if (kept) {
      masters_.push_back(p);
      continue;
    }
    if (p.scalar_type() != torch::kFloat32)
      SLIMTRAIN_THROW(ConfigError, "--weights bf16: trained parameter ", k, " is ", p.scalar_type(),
                      ", not float32; its master would not be exact");
    // A leaf of its own: the optimizer's state is keyed by it, and its .grad is the bucket's.
    masters_.push_back(p.detach().clone(at::MemoryFormat::Preserve));
    p.set_data(p.detach().to(torch::kBFloat16, /*non_blocking=*/false, /*copy=*/false,
                             at::MemoryFormat::Preserve));
  }
}

void MasterWeights::publish() {
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < params_.size(); ++k)
    if (!kept_[k]) params_[k].detach().copy_(masters_[k]);
}

void MasterWeights::as_float32(const std::function<void()>& use) {
  std::vector<torch::Tensor> held;
  // set_data to another dtype drops a parameter's gradient accumulator, and with it the hooks
  // GradientSync put there: each is put back with the bf16 data.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;
  held.reserve(params_.size());
  {
    torch::NoGradGuard no_grad;
    for (std::size_t k = 0; k < params_.size(); ++k) {
      held.push_back(params_[k].detach());
      accumulators.push_back(torch::autograd::impl::try_get_grad_accumulator(params_[k]));
      if (!kept_[k]) params_[k].set_data(masters_[k]);
    }
  }
  // Whatever happens in `use`, the parameters end bf16 and equal to the masters' rounding.
  auto restore = [&] {
    torch::NoGradGuard no_grad;
    for (std::size_t k = 0; k < params_.size(); ++k) {
      if (kept_[k]) continue;
      // A load that gave the parameter new memory rather than writing into the master's.
      if (params_[k].data_ptr() != masters_[k].data_ptr()) masters_[k].copy_(params_[k].detach());
      params_[k].set_data(held[k]);
      if (accumulators[k]) torch::autograd::impl::set_grad_accumulator(params_[k], accumulators[k]);
    }
    publish();
  };
  try {
    use();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

std::uint64_t MasterWeights::master_bytes() const {
  std::uint64_t bytes = 0;
  for (std::size_t k = 0; k < masters_.size(); ++k)
    if (!kept_[k]) bytes += static_cast<std::uint64_t>(masters_[k].nbytes());
  return bytes;
}

std::unique_ptr<MasterWeights> make_master_weights(const Session& s,
                                                   const std::vector<torch::Tensor>& params) {
  if (!s.precision.bf16())
    SLIMTRAIN_THROW(ConfigError, "--weights bf16 needs the run to compute in bf16: --precision ",
                    s.cfg.precision, " chose ", s.precision.precision,
                    s.precision.reason.empty() ? "" : " (" + s.precision.reason + ")");
  if (s.shard != ShardMode::none)
    SLIMTRAIN_THROW(ConfigError,
                    "--weights bf16 needs --shard none (--shard keeps the trained "
                    "weights in one float32 buffer)");
  const std::vector<torch::Tensor> float32 = model::float32_only_parameters(*s.model);
  auto masters = std::make_unique<MasterWeights>(params, float32);
  std::int64_t values = 0, kept = 0;
  for (const torch::Tensor& p : params)
    (p.scalar_type() == torch::kBFloat16 ? values : kept) += p.numel();
  const double bytes = static_cast<double>(masters->master_bytes());
  char size[32];
  if (bytes >= 1e9)
    std::snprintf(size, sizeof size, "%.2f GB", bytes / 1e9);
  else
    std::snprintf(size, sizeof size, "%.1f MB", bytes / 1e6);
  log::info_rank0(
      "--weights bf16: ", values,
      " trained values held in bfloat16, their float32 "
      "masters (",
      size, ") stepped by the optimizer",
      kept > 0 ? detail::concat("; ", kept, " of BatchNorm layers stay float32") : std::string());
  return masters;
}

}  // namespace slimtrain::train
