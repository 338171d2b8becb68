// Where a checkpoint's time goes, one process, no MPI: for each model, the parts the trainer
// blocks on (host copy of the weights, optimiser serialisation) and the parts the background
// writer does (write + fsync + rename), then verification and loading, against one training step.
// Usage: bench_ckpt_parts [dir] [repeats]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/train/optim.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double best_ms(int repeats, F&& f) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

struct Row {
  std::string model;
  double mb, step, copy, optim, write, verify, load;
};

Row measure(const std::string& label, slimtrain::model::ModelSpec spec, const std::string& dir,
            int repeats) {
  namespace fs = std::filesystem;
  torch::manual_seed(1);
  auto model = slimtrain::model::make_model(spec);
  slimtrain::train::OptimConfig oc;
  auto optimizer = slimtrain::train::make_optimizer(oc, model->parameters());
  std::vector<std::int64_t> shape{64};
  for (auto d : spec.input_shape) shape.push_back(d);
  const torch::Tensor x = torch::randn(shape), y = torch::randint(spec.num_classes, {64});
  auto step = [&] {
    optimizer->zero_grad();
    model->forward(x, y).loss.backward();
    optimizer->step();
  };
  step();  // momentum buffers exist from here on

  Row r{label, 0, 0, 0, 0, 0, 0, 0};
  r.step = best_ms(repeats, step);
  slimtrain::ckpt::CheckpointState state;
  r.copy = best_ms(repeats, [&] { state.tensors = slimtrain::ckpt::host_copy(*model); });
  r.optim = best_ms(repeats, [&] {
    state.blobs["optimizer"] = slimtrain::ckpt::serialize_optimizer(*optimizer);
  });
  state.meta = {{"fingerprint", spec.fingerprint()}};
  const std::string ckpts = dir + "/" + label;
  std::string path;
  std::int64_t n = 0;
  r.write = best_ms(repeats, [&] {
    state.step = ++n;
    path = slimtrain::ckpt::write_checkpoint(ckpts, state);
  });
  std::uintmax_t bytes = 0;
  for (const auto& f : fs::directory_iterator(path)) bytes += f.file_size();
  r.mb = static_cast<double>(bytes) / 1e6;
  r.verify = best_ms(repeats, [&] { slimtrain::ckpt::CheckpointManager::verify(path); });
  r.load = best_ms(repeats, [&] {
    auto loaded = slimtrain::ckpt::CheckpointManager::load(path);
    slimtrain::ckpt::load_into(*model, loaded);
    slimtrain::ckpt::deserialize_optimizer(*optimizer, loaded.blobs.at("optimizer"));
  });
  fs::remove_all(ckpts);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : std::filesystem::temp_directory_path().string();
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  torch::set_num_threads(1);
  std::vector<Row> rows;
  slimtrain::model::ModelSpec cnn;
  cnn.name = "cnn-small";
  cnn.input_shape = {1, 28, 28};
  cnn.num_classes = 10;
  rows.push_back(measure("cnn-small", cnn, dir, repeats));
  slimtrain::model::ModelSpec mlp = cnn;
  mlp.name = "mlp";
  mlp.mlp_widths = {2048, 2048};
  rows.push_back(measure("mlp-2048x2", mlp, dir, repeats));

  std::printf("checkpoint parts, 1 thread, batch 64, best of %d (ms)\n", repeats);
  std::printf("%-12s %8s %8s | %10s %10s | %10s | %8s %8s\n", "model", "MB", "step", "host copy",
              "optim ser", "write+sync", "verify", "load");
  for (const Row& r : rows)
    std::printf("%-12s %8.1f %8.1f | %10.1f %10.1f | %10.1f | %8.1f %8.1f\n", r.model.c_str(), r.mb,
                r.step, r.copy, r.optim, r.write, r.verify, r.load);
  for (const Row& r : rows)
    std::printf(
        "RESULT checkpoint_parts model=%s ckpt_mb=%.1f step_ms=%.2f host_copy_ms=%.2f "
        "optim_serialize_ms=%.2f blocking_steps=%.3f write_ms=%.2f verify_ms=%.2f "
        "load_ms=%.2f\n",
        r.model.c_str(), r.mb, r.step, r.copy, r.optim, (r.copy + r.optim) / r.step, r.write,
        r.verify, r.load);
  return 0;
}
