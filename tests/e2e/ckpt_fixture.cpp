// Writes RUN_DIR/checkpoints/step-00000010 and step-00000020 of a small conv/bn/linear model whose
// every parameter and buffer holds arange(numel) * 0.01 + seed(name) + step, a value
// ckpt_export_check.py recomputes from the name alone.
#include <torch/torch.h>

#include <iostream>

#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/torch_state.hpp"

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3)))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(4))),
        fc(register_module("fc", torch::nn::Linear(64, 3))) {}
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

int name_seed(const std::string& name) {
  int sum = 0;
  for (unsigned char c : name) sum += c;
  return sum % 97;
}

void fill(torch::nn::Module& module, std::int64_t step) {
  torch::NoGradGuard no_grad;
  auto set = [&](const std::string& name, torch::Tensor& t) {
    const double base = name_seed(name) + static_cast<double>(step);
    if (t.is_floating_point())
      t.copy_((torch::arange(t.numel(), torch::kFloat64) * 0.01 + base).reshape(t.sizes()));
    else
      t.fill_(static_cast<std::int64_t>(base));
  };
  for (auto& p : module.named_parameters()) set(p.key(), p.value());
  for (auto& b : module.named_buffers()) set(b.key(), b.value());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ckpt_fixture RUN_DIR\n";
    return 2;
  }
  try {
    Net net;
    slimtrain::ckpt::CheckpointManager manager(argv[1], slimtrain::ckpt::RetentionPolicy{});
    for (std::int64_t step : {10, 20}) {
      fill(*net, step);
      slimtrain::ckpt::CheckpointState state;
      state.step = step;
      state.epoch = step / 10;
      state.meta = {{"model", {{"name", "fixture"}, {"classes", 3}}}};
      state.tensors = slimtrain::ckpt::host_copy(*net);
      manager.save_async(std::move(state));
      manager.wait();
    }
    std::cout << manager.last_written() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "ckpt_fixture: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
