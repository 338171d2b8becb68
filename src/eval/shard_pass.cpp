#include "slimtrain/eval/shard_pass.hpp"

#include "slimtrain/data/eval_loader.hpp"

namespace slimtrain::eval {
namespace {
struct EvalModeGuard {
  explicit EvalModeGuard(model::ClassifierImpl& m) : model(m), was_training(m.is_training()) {
    model.eval();
  }
  ~EvalModeGuard() { model.train(was_training); }
  model::ClassifierImpl& model;
  bool was_training;
};
}  // namespace

model::Output forward_batch(model::ClassifierImpl& model, const data::Batch& batch,
                            const torch::Device& device) {
  const torch::Tensor y = batch.y.to(device);
  if (batch.inputs.empty()) return model.forward(batch.x.to(device), y);
  model::NamedInputs inputs;
  for (const auto& [name, tensor] : batch.inputs) inputs.emplace_back(name, tensor.to(device));
  return model.forward_named(inputs, y);
}

EvalStats evaluate_shard(model::ClassifierImpl& model, const data::DatasetInfo& info,
                         const std::string& split, int rank, int world_size,
                         std::int64_t batch_size) {
  // Inference mode, not just no-grad: no autograd state, no version counters, no view tracking.
  c10::InferenceMode inference;
  EvalModeGuard mode(model);
  EvalStats stats(info.num_classes);
  data::EvalLoader loader(info, split, rank, world_size, batch_size);
  const torch::Device device =
      model.parameters().empty() ? torch::Device(torch::kCPU) : model.parameters().front().device();
  data::Batch batch;
  while (loader.next(batch)) {
    model::Output out = forward_batch(model, batch, device);
    const torch::Tensor y = batch.y.to(device);
    stats.add_batch(out.logits, y, out.loss.item<double>() * static_cast<double>(y.size(0)));
  }
  return stats;
}

}  // namespace slimtrain::eval
