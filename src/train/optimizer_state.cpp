#include "slimtrain/train/optimizer_state.hpp"

#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::train {
namespace {

// The first `length` elements of a state tensor in the parameter's row-major order, on the host.
torch::Tensor elements(const torch::Tensor& t, std::int64_t length) {
  return t.detach().contiguous().reshape({-1}).narrow(0, 0, length).to(torch::kCPU);
}

// `values` (row-major, `length` of them) as a state tensor for `param`: its shape and strides.
// Where they are already that (a whole contiguous parameter on the host), a view of them: a
// resume then holds the optimizer state once, not once more while it is reshaped.
torch::Tensor as_state(const torch::Tensor& param, const torch::Tensor& values,
                       std::int64_t length) {
  if (length == param.numel() && param.is_contiguous() && param.device().is_cpu() &&
      values.is_contiguous() && values.scalar_type() == param.scalar_type())
    return values.view(param.sizes());
  torch::Tensor out = torch::zeros_like(param, torch::MemoryFormat::Preserve);
  torch::Tensor rows = torch::zeros({param.numel()}, values.options());
  rows.narrow(0, 0, length).copy_(values);
  out.copy_(rows.view(param.sizes()));
  return out;
}

}  // namespace

ckpt::FlatOptimizerState flat_state(const torch::optim::Optimizer& optimizer,
                                    const std::string& name,
                                    const std::vector<OptimizedSpan>& spans) {
  ckpt::FlatOptimizerState out;
  out.optimizer = name;
  std::map<std::string, std::vector<torch::Tensor>> parts;
  for (const OptimizedSpan& span : spans) {
    out.ranges.push_back({span.logical.start, span.logical.length});
    const auto it = optimizer.state().find(ckpt::optimizer_state_key(span.tensor));
    const torch::optim::OptimizerParamState* state =
        it == optimizer.state().end() ? nullptr : it->second.get();
    auto add = [&](const char* kind, const torch::Tensor& t) {
      parts[kind].push_back(t.defined() ? elements(t, span.logical.length)
                                        : torch::zeros({span.logical.length}, torch::kFloat32));
    };
    if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(state)) {
      add("momentum_buffer", sgd->momentum_buffer());
    } else if (const auto* adamw = dynamic_cast<const torch::optim::AdamWParamState*>(state)) {
      add("exp_avg", adamw->exp_avg());
      add("exp_avg_sq", adamw->exp_avg_sq());
      out.step = std::max(out.step, adamw->step());
    }
  }
  // A kind is written when every span has it (a step has updated them all, or none yet).
  for (auto& [kind, list] : parts)
    if (list.size() == spans.size()) out.tensors[kind] = torch::cat(list);
  return out;
}

ckpt::FlatOptimizerState empty_state(const std::vector<OptimizedSpan>& spans) {
  ckpt::FlatOptimizerState out;
  for (const OptimizedSpan& span : spans)
    out.ranges.push_back({span.logical.start, span.logical.length});
  return out;
}

void load_flat_state(torch::optim::Optimizer& optimizer, const std::string& name,
                     const std::vector<OptimizedSpan>& spans,
                     const ckpt::FlatOptimizerState& state) {
  if (state.tensors.empty()) return;  // written before the first update: nothing to restore
  if (state.optimizer != name)
    SLIMTRAIN_THROW(DataError, "the checkpoint's optimizer state is ", state.optimizer,
                    "'s; this run's --optimizer is ", name);
  torch::NoGradGuard no_grad;
  std::int64_t at = 0;
  auto part = [&](const char* kind, const OptimizedSpan& span) {
    const auto it = state.tensors.find(kind);
    if (it == state.tensors.end()) return torch::Tensor();
    return as_state(span.tensor, it->second.narrow(0, at, span.logical.length), span.logical.length)
        .to(span.tensor.device());
  };
  for (const OptimizedSpan& span : spans) {
    if (name == "sgd") {
      auto s = std::make_unique<torch::optim::SGDParamState>();
      s->momentum_buffer(part("momentum_buffer", span));
      optimizer.state()[ckpt::optimizer_state_key(span.tensor)] = std::move(s);
    } else {
      auto s = std::make_unique<torch::optim::AdamWParamState>();
      s->step(state.step);
      s->exp_avg(part("exp_avg", span));
      s->exp_avg_sq(part("exp_avg_sq", span));
      optimizer.state()[ckpt::optimizer_state_key(span.tensor)] = std::move(s);
    }
    at += span.logical.length;
  }
}

}  // namespace slimtrain::train
