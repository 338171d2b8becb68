#include "slimtrain/train/weight_shards.hpp"

#include <algorithm>
#include <unordered_map>

#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/model/deferred_weights.hpp"

namespace slimtrain::train {

bool all_finite(const torch::Tensor& t) {
  constexpr std::int64_t kPiece = 1 << 18;
  const torch::Tensor flat = t.reshape({-1});  // host copies are contiguous: a view
  for (std::int64_t at = 0; at < flat.numel(); at += kPiece) {
    const torch::Tensor piece = flat.narrow(0, at, std::min(kPiece, flat.numel() - at));
    if (!torch::isfinite(piece).all().item<bool>()) return false;
  }
  return true;
}

ckpt::FlatOptimizerState weight_pieces(const ShardedParams& shards) {
  torch::NoGradGuard no_grad;
  ckpt::FlatOptimizerState out;
  out.optimizer = "weights";
  std::vector<torch::Tensor> parts;
  for (const OptimizedSpan& span : shards.spans()) {
    if (span.logical.length == 0) continue;  // padding only
    out.ranges.push_back({span.logical.start, span.logical.length});
    parts.push_back(span.tensor.narrow(0, 0, span.logical.length).to(torch::kCPU, torch::kFloat32));
  }
  if (!parts.empty()) out.tensors["weights"] = torch::cat(parts);  // a copy: the step goes on
  return out;
}

std::string nonfinite_pieces(const ShardedParams& shards, comm::ControlPlane& control) {
  bool finite = true;
  for (const torch::Tensor& piece : shards.shard()) finite = finite && all_finite(piece);
  comm::OpOptions options;
  options.tag = "checkpoint-finite";
  const std::int64_t size = control.size();
  const std::int64_t lowest =
      control
          .all_reduce(std::vector<std::int64_t>{finite ? size : control.rank()},
                      comm::ReduceOp::min, options)
          .at(0);
  if (lowest == size) return "";
  return "a weight in rank " + std::to_string(lowest) + "'s shard";
}

std::unordered_map<std::string, std::size_t> checkpoint_names(
    const torch::nn::Module& model, const std::vector<torch::Tensor>& trained) {
  std::unordered_map<const void*, std::size_t> position;
  for (std::size_t k = 0; k < trained.size(); ++k) position[trained[k].unsafeGetTensorImpl()] = k;
  std::unordered_map<std::string, std::size_t> names;
  for (const auto& item : model.named_parameters(true)) {
    const auto found = position.find(item.value().unsafeGetTensorImpl());
    if (found != position.end()) names["model/" + item.key()] = found->second;
  }
  return names;
}

std::vector<ckpt::TensorEntry> entries_from_weight_files(const torch::nn::Module& model,
                                                         const std::vector<torch::Tensor>& trained,
                                                         const FlatLayout& layout, int writers) {
  // Stand-ins without memory for the trained weights (their buckets are freed): host_copy takes
  // them as the copies, so nothing of them is read now.
  std::unordered_map<const void*, torch::Tensor> shells;
  for (const torch::Tensor& t : trained)
    shells[t.unsafeGetTensorImpl()] =
        slimtrain::model::without_memory(t.sizes(), t.options().device(torch::kCPU));
  const std::unordered_map<std::string, std::size_t> index = checkpoint_names(model, trained);
  std::vector<ckpt::TensorEntry> entries = ckpt::host_copy(model, "model/", shells);
  for (ckpt::TensorEntry& e : entries) {
    const auto found = index.find(e.name);
    if (found == index.end()) continue;
    const std::size_t k = found->second;
    const std::int64_t start = layout.logical_of(k), numel = trained[k].numel();
    const std::vector<std::int64_t> shape = trained[k].sizes().vec();
    const torch::ScalarType type = trained[k].scalar_type();
    e.deferred = true;
    e.produce = [start, numel, shape, type, writers, name = e.name](const std::string& dir) {
      ckpt::FlatOptimizerState target;
      target.ranges = {{start, numel}};
      std::int64_t filled = 0;
      for (int r = 0; r < writers; ++r)
        filled += ckpt::fill_from_file(target, dir + "/" + ckpt::weights_file_name(r)).elements;
      const auto values = target.tensors.find("weights");
      if (filled != numel || values == target.tensors.end())
        SLIMTRAIN_THROW(Error, "checkpoint: the ranks' weight files hold ", filled, " of the ",
                        numel, " elements of ", name);
      return values->second.view(shape).to(type);
    };
  }
  return entries;
}

}  // namespace slimtrain::train
