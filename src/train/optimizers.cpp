#include "slimtrain/train/optimizers.hpp"

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define SLIMTRAIN_FUSED_OPTIMIZERS 1
#endif

namespace slimtrain::train {
namespace {

using Pieces = std::vector<torch::Tensor>;

// Calls `step` on matching pieces of `tensors` (all contiguous and of one size: flat runs of at
// most `chunk` elements), or once on the tensors whole when any is not contiguous.
void for_each_piece(const Pieces& tensors, std::int64_t chunk,
                    const std::function<void(const Pieces&)>& step) {
  bool flat = chunk > 0;
  for (const torch::Tensor& t : tensors)
    flat = flat && t.is_contiguous() && t.numel() == tensors.front().numel();
  const std::int64_t n = tensors.front().numel();
  if (!flat || n <= chunk) {
    step(tensors);
    return;
  }
  Pieces views;
  for (const torch::Tensor& t : tensors) views.push_back(t.view({-1}));
  Pieces piece(tensors.size());
  for (std::int64_t at = 0; at < n; at += chunk) {
    const std::int64_t length = std::min(chunk, n - at);
    for (std::size_t i = 0; i < views.size(); ++i) piece[i] = views[i].narrow(0, at, length);
    step(piece);
  }
}

// A temporary like `like`: the start of one scratch buffer kept for the whole step (pieces are
// at most a chunk), or, for a tensor stepped whole because it is not contiguous, its own.
torch::Tensor scratch_for(torch::Tensor& scratch, const torch::Tensor& like) {
  if (!like.is_contiguous()) return torch::empty_like(like);
  if (!scratch.defined() || scratch.numel() < like.numel())
    scratch = torch::empty({like.numel()}, like.options());
  return scratch.narrow(0, 0, like.numel()).view(like.sizes());
}

// LibTorch's optimizers evaluate the closure with gradients on and step without.
torch::Tensor run_closure(const torch::optim::Optimizer::LossClosure& closure) {
  if (closure == nullptr) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}

#ifdef SLIMTRAIN_FUSED_OPTIMIZERS
std::optional<at::Tensor> optional_flag(const torch::Tensor& flag) {
  return flag.defined() ? std::optional<at::Tensor>(flag) : std::nullopt;
}
#endif

}  // namespace

bool fused_optimizers_available() {
#ifdef SLIMTRAIN_FUSED_OPTIMIZERS
  return true;
#else
  return false;
#endif
}

void SteppedOptimizer::use_fused(bool on) {
  if (on && !fused_optimizers_available())
    SLIMTRAIN_THROW(ConfigError, "fused optimizer kernels need LibTorch 2.4 or later; this is ",
                    TORCH_VERSION);
  fused_ = on;
}

torch::Tensor SGD::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) fused_ ? step_fused(group) : step_in_pieces(group);
  return loss;
}

void SGD::step_in_pieces(torch::optim::OptimizerParamGroup& group) {
  const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
  const double weight_decay = options.weight_decay(), momentum = options.momentum();
  const double dampening = options.dampening(), lr = options.lr();
  const bool nesterov = options.nesterov();
  torch::Tensor scratch;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    torch::Tensor grad = p.grad();
    torch::Tensor weights = p.data();
    // LibTorch's first step copies the (decayed) gradient into the momentum buffer.
    bool first = false;
    torch::Tensor buffer;
    if (momentum != 0) {
      const auto key = ckpt::optimizer_state_key(p);
      auto found = state_.find(key);
      if (found == state_.end()) {
        first = true;
        buffer = torch::empty_like(grad, torch::MemoryFormat::Preserve);
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(buffer);
        state_[key] = std::move(state);
      } else {
        buffer = static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer();
      }
    }
    Pieces tensors{weights, grad};
    if (buffer.defined()) tensors.push_back(buffer);
    for_each_piece(tensors, chunk_, [&](const Pieces& t) {
      torch::Tensor d_p = t[1];
      if (weight_decay != 0) {
        torch::Tensor decayed = scratch_for(scratch, d_p);
        d_p = at::add_out(decayed, d_p, t[0], weight_decay);
      }
      if (momentum != 0) {
        const torch::Tensor& buf = t[2];
        if (first)
          buf.copy_(d_p);
        else
          buf.mul_(momentum).add_(d_p, 1 - dampening);
        if (nesterov && d_p.data_ptr() == t[1].data_ptr()) {
          torch::Tensor step = scratch_for(scratch, d_p);  // d_p is the gradient: keep it
          d_p = at::add_out(step, d_p, buf, momentum);
        } else if (nesterov) {
          d_p.add_(buf, momentum);  // d_p is the scratch already
        } else {
          d_p = buf;
        }
      }
      t[0].add_(d_p, -1 * lr);
    });
  }
}

void SGD::step_fused(torch::optim::OptimizerParamGroup& group) {
#ifdef SLIMTRAIN_FUSED_OPTIMIZERS
  const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
  std::vector<torch::Tensor> params, grads, buffers;
  bool first = false;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    params.push_back(p.data());
    grads.push_back(p.grad());
    if (options.momentum() == 0) continue;
    auto& entry = state_[ckpt::optimizer_state_key(p)];
    if (!entry) {
      // The kernel fills it at its first step (is_first_step), as LibTorch's first copy does.
      auto state = std::make_unique<torch::optim::SGDParamState>();
      state->momentum_buffer(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      entry = std::move(state);
      first = true;
    }
    buffers.push_back(static_cast<torch::optim::SGDParamState&>(*entry).momentum_buffer());
  }
  if (params.empty()) return;
  at::_fused_sgd_(params, grads, buffers, options.weight_decay(), options.momentum(), options.lr(),
                  options.dampening(), options.nesterov(), /*maximize=*/false, first,
                  /*grad_scale=*/std::nullopt, optional_flag(found_inf_));
#else
  (void)group;
#endif
}

torch::optim::AdamWParamState& AdamW::state_of(const torch::Tensor& param) {
  auto& entry = state_[ckpt::optimizer_state_key(param)];
  if (!entry) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(0);
    state->exp_avg(torch::zeros_like(param, torch::MemoryFormat::Preserve));
    state->exp_avg_sq(torch::zeros_like(param, torch::MemoryFormat::Preserve));
    entry = std::move(state);
  }
  return static_cast<torch::optim::AdamWParamState&>(*entry);
}

torch::Tensor AdamW::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad())
      SLIMTRAIN_THROW(Error, "AdamW with amsgrad is not implemented here (not an option)");
    fused_ ? step_fused(group) : step_in_pieces(group);
  }
  return loss;
}

void AdamW::step_in_pieces(torch::optim::OptimizerParamGroup& group) {
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
  torch::Tensor scratch;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    const torch::Tensor& grad = p.grad();
    // Decoupled weight decay first, in place, as LibTorch does.
    if (options.weight_decay() != 0) p.mul_(1 - options.lr() * options.weight_decay());
    auto& state = state_of(p);
    state.step(state.step() + 1);
    const double beta1 = std::get<0>(options.betas());
    const double beta2 = std::get<1>(options.betas());
    const double bias_correction1 = 1 - std::pow(beta1, state.step());
    const double bias_correction2 = 1 - std::pow(beta2, state.step());
    const double root_correction2 = std::sqrt(bias_correction2);
    const double step_size = options.lr() / bias_correction1;
    const double eps = options.eps();
    // The moments update in place (no temporary); the denominator is made a piece at a time.
    state.exp_avg().mul_(beta1).add_(grad, 1 - beta1);
    state.exp_avg_sq().mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    torch::Tensor weights = p.data();
    for_each_piece({weights, state.exp_avg(), state.exp_avg_sq()}, chunk_, [&](const Pieces& t) {
      torch::Tensor denom = scratch_for(scratch, t[2]);
      at::sqrt_out(denom, t[2]);
      denom.div_(root_correction2).add_(eps);
      t[0].addcdiv_(t[1], denom, -step_size);
    });
  }
}

void AdamW::step_fused(torch::optim::OptimizerParamGroup& group) {
#ifdef SLIMTRAIN_FUSED_OPTIMIZERS
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
  std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  device_steps_.resize(group.params().size());
  last_stepped_.clear();
  for (std::size_t i = 0; i < group.params().size(); ++i) {
    const torch::Tensor& p = group.params()[i];
    if (!p.grad().defined()) continue;
    auto& state = state_of(p);
    DeviceStep& device = device_steps_[i];
    if (device.state != &state) {  // new, or loaded from a checkpoint: the host's count
      device.state = &state;
      device.count =
          torch::full({}, static_cast<double>(state.step()), p.options().dtype(torch::kFloat32));
    }
    state.step(state.step() + 1);  // the host's count; undo_step() when the device skipped
    last_stepped_.push_back(&state);
    params.push_back(p.data());
    grads.push_back(p.grad());
    exp_avgs.push_back(state.exp_avg());
    exp_avg_sqs.push_back(state.exp_avg_sq());
    steps.push_back(device.count);
  }
  if (params.empty()) return;
  // As PyTorch's fused AdamW: the counts advance before the kernel reads them, and a skipped step
  // takes the advance back, on the device.
  at::_foreach_add_(steps, 1);
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps,
                    options.lr(), std::get<0>(options.betas()), std::get<1>(options.betas()),
                    options.weight_decay(), options.eps(), /*amsgrad=*/false, /*maximize=*/false,
                    /*grad_scale=*/std::nullopt, optional_flag(found_inf_));
  if (found_inf_.defined()) at::_foreach_add_(steps, found_inf_.reshape({}), -1);
#else
  (void)group;
#endif
}

void AdamW::undo_step() {
  for (torch::optim::AdamWParamState* state : last_stepped_) state->step(state->step() - 1);
  last_stepped_.clear();
}

}  // namespace slimtrain::train
