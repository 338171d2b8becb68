#include "slimtrain/eval/shard_pass.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/eval_loader.hpp"
#include "slimtrain/model/autocast.hpp"

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
                         std::int64_t batch_size, bool bf16, ShardPredictions* predictions) {
  // Inference mode, not just no-grad: no autograd state, no version counters, no view tracking.
  c10::InferenceMode inference;
  EvalModeGuard mode(model);
  EvalStats stats(info.num_classes);
  data::EvalLoader loader(info, split, rank, world_size, batch_size);
  const torch::Device device =
      model.parameters().empty() ? torch::Device(torch::kCPU) : model.parameters().front().device();
  const bool on_gpu = device.is_cuda();
  const std::int64_t c = info.num_classes;
  // On a GPU: [loss sum, labels outside [0, C), the C x C cells], on the device until the end.
  torch::Tensor sums;
  if (on_gpu)
    sums = torch::zeros({2 + c * c}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
  std::int64_t count = 0;
  std::vector<torch::Tensor> kept, kept_labels;  // --predictions: each batch's, on the host
  data::Batch batch;
  while (loader.next(batch)) {
    model::Output out;
    {
      model::AutocastScope autocast(bf16, on_gpu);
      out = forward_batch(model, batch, device);
    }
    const torch::Tensor y = batch.y.to(device);
    if (predictions != nullptr) {
      kept.push_back(out.logits.to(torch::kCPU, torch::kFloat32));
      kept_labels.push_back(batch.y.to(torch::kCPU, torch::kInt64));
    }
    if (!on_gpu) {
      stats.add_batch(out.logits, y, out.loss.item<double>() * static_cast<double>(y.size(0)));
      continue;
    }
    const torch::Tensor bad = (y < 0).logical_or(y >= c);
    const torch::Tensor cell = (y.clamp(0, c - 1) * c + out.logits.argmax(1)) + 2;
    sums.narrow(0, 0, 1).add_(out.loss.to(torch::kFloat64) * static_cast<double>(y.size(0)));
    sums.narrow(0, 1, 1).add_(bad.sum().to(torch::kFloat64));
    sums.index_add_(0, cell, torch::ones_like(cell, torch::kFloat64));
    count += y.size(0);
  }
  if (predictions != nullptr) {
    predictions->first_row = loader.first_row();
    predictions->logits = kept.empty() ? torch::zeros({0, c}) : torch::cat(kept);
    predictions->labels =
        kept_labels.empty() ? torch::zeros({0}, torch::kInt64) : torch::cat(kept_labels);
  }
  if (!on_gpu) return stats;
  const torch::Tensor host = sums.cpu();  // the evaluation's one read back
  const double* v = host.data_ptr<double>();
  if (v[1] > 0)
    SLIMTRAIN_THROW(DataError, "evaluation: ", static_cast<std::int64_t>(v[1]), " labels of /",
                    split, " are outside [0, ", c, ")");
  std::vector<double> packed(EvalStats::packed_size(c));
  packed[0] = v[0];
  packed[1] = static_cast<double>(count);
  for (std::int64_t i = 0; i < c * c; ++i) packed[static_cast<std::size_t>(2 + i)] = v[2 + i];
  return EvalStats::unpack(packed, c);
}

}  // namespace slimtrain::eval
