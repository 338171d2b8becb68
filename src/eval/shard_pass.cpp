#include "slimtrain/eval/shard_pass.hpp"

#include <algorithm>
#include <memory>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/batch_memory.hpp"
#include "slimtrain/data/eval_loader.hpp"
#include "slimtrain/data/shard.hpp"
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

namespace {

// On a GPU the statistics accumulate on the device, read back once at the end: [loss sum,
// labels outside [0, C), true positives C, predictions C, samples C, the C x C cells when kept],
// and above the confusion limit the first samples' (true * C + predicted) codes.
class DeviceSums {
 public:
  DeviceSums(const EvalStats& shape, std::int64_t local_count, const torch::Device& device)
      : c_(shape.num_classes()), keeps_(shape.keeps_matrix()), max_(shape.confusion_max_classes()) {
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
    sums_ = torch::zeros({static_cast<std::int64_t>(EvalStats::packed_size(c_, max_))}, f64);
    if (!keeps_)
      codes_ = torch::empty({std::min(local_count, kConfusionSampleSize)},
                            torch::TensorOptions().dtype(torch::kInt64).device(device));
  }

  void add(const torch::Tensor& logits, const torch::Tensor& y, const torch::Tensor& loss) {
    const std::int64_t b = y.size(0), c = c_;
    const torch::Tensor truth = y.clamp(0, c - 1);
    const torch::Tensor predicted = logits.argmax(1);
    sums_.narrow(0, 0, 1).add_(loss.to(torch::kFloat64) * static_cast<double>(b));
    sums_.narrow(0, 1, 1).add_((y < 0).logical_or(y >= c).sum().to(torch::kFloat64));
    const torch::Tensor ones = torch::ones_like(truth, torch::kFloat64);
    std::vector<torch::Tensor> at{truth + 2, predicted + (2 + c), truth + (2 + 2 * c)};
    std::vector<torch::Tensor> add{truth.eq(predicted).to(torch::kFloat64), ones, ones};
    if (keeps_) {
      at.push_back(truth * c + predicted + (2 + 3 * c));
      add.push_back(ones);
    }
    sums_.index_add_(0, torch::cat(at), torch::cat(add));
    if (!keeps_ && sampled_ < codes_.size(0)) {
      const std::int64_t n = std::min(b, codes_.size(0) - sampled_);
      codes_.narrow(0, sampled_, n).copy_((truth * c + predicted).narrow(0, 0, n));
      sampled_ += n;
    }
    count_ += b;
  }

  EvalStats read_back(const std::string& split) const {
    const torch::Tensor host = sums_.cpu();  // the evaluation's one read back
    std::vector<double> packed(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
    if (packed[1] > 0)
      SLIMTRAIN_THROW(DataError, "evaluation: ", static_cast<std::int64_t>(packed[1]),
                      " labels of /", split, " are outside [0, ", c_, ")");
    packed[1] = static_cast<double>(count_);
    EvalStats stats = EvalStats::unpack(packed, c_, max_);
    if (!keeps_ && sampled_ > 0) {
      const torch::Tensor codes = codes_.narrow(0, 0, sampled_).cpu();
      stats.sample_confusions(codes.data_ptr<std::int64_t>(), sampled_);
    }
    return stats;
  }

 private:
  std::int64_t c_;
  bool keeps_;
  std::int64_t max_;
  torch::Tensor sums_, codes_;
  std::int64_t count_ = 0, sampled_ = 0;
};

// The most batches any rank's share of `global` rows takes (data::eval_share).
std::int64_t most_batches(std::int64_t global, int world_size, std::int64_t batch_size) {
  std::int64_t most = 0;
  for (int r = 0; r < world_size; ++r) {
    const data::Range share = data::eval_share(global, r, world_size);
    most = std::max(most, (share.end - share.begin + batch_size - 1) / batch_size);
  }
  return most;
}

// forwards_alike: the forwards a rank out of batches still runs, on the split's first row, so
// that every rank issues the same gathers; nothing of them is kept.
void stand_in_forwards(model::ClassifierImpl& model, const data::DatasetInfo& info,
                       const std::string& split, std::int64_t count, const ShardOptions& options,
                       const torch::Device& device) {
  if (count <= 0) return;
  data::EvalLoader first(info, split, 0, 1, 1);
  data::Batch batch;
  if (!first.next(batch)) return;  // an empty split: no rank has a batch
  for (std::int64_t i = 0; i < count; ++i) {
    model::AutocastScope autocast(options.bf16, device.is_cuda());
    forward_batch(model, batch, device);
  }
}

}  // namespace

EvalStats evaluate_shard(model::ClassifierImpl& model, const data::DatasetInfo& info,
                         const std::string& split, int rank, int world_size,
                         const ShardOptions& options, ShardPredictions* predictions) {
  // Inference mode, not just no-grad: no autograd state, no version counters, no view tracking.
  c10::InferenceMode inference;
  EvalModeGuard mode(model);
  EvalStats stats(info.num_classes, options.confusion_max_classes);
  data::EvalLoader loader(info, split, rank, world_size, options.batch_size);
  loader.set_batch_remedy(options.batch_remedy);
  const torch::Device device =
      model.parameters().empty() ? torch::Device(torch::kCPU) : model.parameters().front().device();
  const bool on_gpu = device.is_cuda();
  const std::int64_t c = info.num_classes;
  std::unique_ptr<DeviceSums> sums;
  if (on_gpu) sums = std::make_unique<DeviceSums>(stats, loader.local_count(), device);
  std::vector<torch::Tensor> kept, kept_labels;  // --predictions: each batch's, on the host
  data::Batch batch;
  std::int64_t forwards = 0;
  while (true) {
    const std::int64_t first = loader.position();
    batch = data::Batch();  // the last one's memory back before the next is made
    try {
      if (!loader.next(batch)) break;
      model::Output out;
      {
        model::AutocastScope autocast(options.bf16, on_gpu);
        out = forward_batch(model, batch, device);
      }
      ++forwards;
      const torch::Tensor y = batch.y.to(device);
      if (predictions != nullptr) {
        kept.push_back(out.logits.to(torch::kCPU, torch::kFloat32));
        kept_labels.push_back(batch.y.to(torch::kCPU, torch::kInt64));
      }
      if (on_gpu)
        sums->add(out.logits, y, out.loss);
      else
        stats.add_batch(out.logits, y, out.loss.item<double>() * static_cast<double>(y.size(0)));
    } catch (const std::exception& e) {
      // A batch too large for memory (a 9-million-token sample) is the data's: exit 2 naming
      // the sample, as training's batches are, not an allocator's trace.
      if (!data::is_allocation_failure(e)) throw;
      const std::int64_t n = std::min(options.batch_size, loader.share_end() - first);
      data::refuse_batch(detail::concat("the evaluation batch of rows ", first, "-", first + n - 1),
                         n, batch.longest_row, batch.longest_length, split, e,
                         options.batch_remedy);
    }
  }
  if (options.forwards_alike)
    stand_in_forwards(
        model, info, split,
        most_batches(loader.global_count(), world_size, options.batch_size) - forwards, options,
        device);
  if (predictions != nullptr) {
    predictions->first_row = loader.first_row();
    predictions->logits = kept.empty() ? torch::zeros({0, c}) : torch::cat(kept);
    predictions->labels =
        kept_labels.empty() ? torch::zeros({0}, torch::kInt64) : torch::cat(kept_labels);
  }
  return on_gpu ? sums->read_back(split) : stats;
}

}  // namespace slimtrain::eval
