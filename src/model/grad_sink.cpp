#include "slimtrain/model/grad_sink.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <cstdint>

namespace slimtrain::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = x W^T + b with the weight and bias gradients offered to the sink. Without a bias the
// function takes no bias at all: LibTorch 1.13's Function::apply refuses an undefined input.
torch::Tensor sink_forward(AutogradContext* ctx, const torch::Tensor& x,
                           const torch::Tensor& weight, const torch::Tensor& bias, GradSink* sink) {
  ctx->save_for_backward({x});
  // The parameters themselves (not saved copies): the sink knows them by identity.
  ctx->saved_data["weight"] = weight;
  ctx->saved_data["bias"] = bias;
  // The model keeps every sink it was given alive (ClassifierImpl::set_grad_sink).
  ctx->saved_data["sink"] = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(sink));
  return torch::nn::functional::linear(x, weight, bias);
}

// {input, weight, bias} gradients (bias's undefined without one).
variable_list sink_backward(AutogradContext* ctx, const variable_list& grads, bool wants_weight,
                            bool wants_bias) {
  const torch::Tensor x = ctx->get_saved_variables()[0];
  const torch::Tensor weight = ctx->saved_data["weight"].toTensor();
  const torch::Tensor bias = ctx->saved_data["bias"].toTensor();
  auto* sink =
      reinterpret_cast<GradSink*>(static_cast<std::intptr_t>(ctx->saved_data["sink"].toInt()));
  const torch::Tensor& go = grads[0];
  torch::Tensor grad_x;
  if (ctx->needs_input_grad(0)) grad_x = go.matmul(weight);
  const torch::Tensor go2 = go.reshape({-1, go.size(-1)});
  const torch::Tensor x2 = x.reshape({-1, x.size(-1)});
  if (!(wants_weight || wants_bias) ||
      (sink != nullptr && sink->take_linear(weight, bias, go2, x2)))
    return {grad_x, torch::Tensor(), torch::Tensor()};
  torch::Tensor grad_w, grad_b;
  if (wants_weight) grad_w = go2.t().mm(x2);
  if (bias.defined() && wants_bias) grad_b = go2.sum(0);
  return {grad_x, grad_w, grad_b};
}

struct SinkLinear : public torch::autograd::Function<SinkLinear> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               GradSink* sink) {
    return sink_forward(ctx, x, weight, bias, sink);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list out =
        sink_backward(ctx, grads, ctx->needs_input_grad(1), ctx->needs_input_grad(2));
    out.emplace_back();  // the sink
    return out;
  }
};

struct SinkLinearNoBias : public torch::autograd::Function<SinkLinearNoBias> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, GradSink* sink) {
    return sink_forward(ctx, x, weight, torch::Tensor(), sink);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list out = sink_backward(ctx, grads, ctx->needs_input_grad(1), false);
    out.back() = torch::Tensor();  // the sink's place
    return out;
  }
};

// Under autocast (--precision bf16) the product runs in bfloat16 with casts autograd must record;
// inside a custom function they would not be, so those layers keep autograd's own backward.
bool autocasting() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(at::kCPU) ||
         at::autocast::is_autocast_enabled(at::kCUDA);
#else
  return at::autocast::is_cpu_enabled() || at::autocast::is_enabled();
#endif
}

}  // namespace

torch::Tensor linear(const torch::Tensor& x, const torch::nn::LinearImpl& layer, GradSink* sink) {
  if (sink == nullptr || !torch::GradMode::is_enabled() || autocasting())
    return torch::nn::functional::linear(x, layer.weight, layer.bias);  // LinearImpl::forward
  if (!layer.bias.defined()) return SinkLinearNoBias::apply(x, layer.weight, sink);
  return SinkLinear::apply(x, layer.weight, layer.bias, sink);
}

}  // namespace slimtrain::model
