#include "slimtrain/model/recompute.hpp"

#include <optional>
#include <utility>

#include "slimtrain/model/autocast.hpp"

namespace slimtrain::model {
namespace {

// The generators' states at the forward, put in place for the recomputation and taken back after.
struct RecomputeRandomState {
  torch::Tensor cpu;
  std::optional<torch::Device> cuda;
  torch::Tensor cuda_state;

  static RecomputeRandomState now(const torch::Device& device) {
    RecomputeRandomState s;
    s.cpu = get(at::detail::getDefaultCPUGenerator());
    if (device.is_cuda()) {
      s.cuda = device;
      s.cuda_state = get(at::globalContext().defaultGenerator(device));
    }
    return s;
  }
  void restore() const {
    set(at::detail::getDefaultCPUGenerator(), cpu);
    if (cuda) set(at::globalContext().defaultGenerator(*cuda), cuda_state);
  }

 private:
  static torch::Tensor get(at::Generator generator) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
  }
  static void set(at::Generator generator, const torch::Tensor& state) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  }
};

// What backward needs besides the saved input: kept in the autograd context as a capsule.
struct RecomputeSaved : torch::CustomClassHolder {
  LayerFunction layer;
  RecomputeRandomState random;
  AutocastState autocast;
};

class RecomputeFunction : public torch::autograd::Function<RecomputeFunction> {
 public:
  // `anchor` needs a gradient, so backward runs even where x needs none (the weights may).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& anchor, LayerFunction layer) {
    (void)anchor;
    auto saved = c10::make_intrusive<RecomputeSaved>();
    saved->random = RecomputeRandomState::now(x.device());
    saved->autocast = current_autocast();
    torch::Tensor y = layer(x);  // autograd is off in a Function's forward
    saved->layer = std::move(layer);
    ctx->save_for_backward({x});
    ctx->saved_data["saved"] = c10::IValue::make_capsule(std::move(saved));
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved =
        c10::static_intrusive_pointer_cast<RecomputeSaved>(ctx->saved_data["saved"].toCapsule());
    const torch::Tensor x = ctx->get_saved_variables()[0];
    if (!grads[0].defined()) return {torch::Tensor(), torch::Tensor(), torch::Tensor()};
    const RecomputeRandomState after = RecomputeRandomState::now(x.device());
    saved->random.restore();
    torch::Tensor input = x.detach().requires_grad_(x.requires_grad());
    {
      torch::AutoGradMode grad(true);
      AutocastScope autocast(saved->autocast.bf16, saved->autocast.cuda);
      const torch::Tensor y = saved->layer(input);
      torch::autograd::backward({y}, {grads[0]});
    }
    after.restore();
    return {x.requires_grad() ? input.grad() : torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor recompute_in_backward(LayerFunction layer, const torch::Tensor& x) {
  if (!torch::GradMode::is_enabled()) return layer(x);
  const torch::Tensor anchor =
      torch::empty({0}, x.options().dtype(torch::kFloat32)).requires_grad_(true);
  return RecomputeFunction::apply(x, anchor, std::move(layer));
}

}  // namespace slimtrain::model
