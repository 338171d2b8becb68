#include "slimtrain/data/batch_normaliser.hpp"

namespace slimtrain::data {

BatchNormaliser::Channels BatchNormaliser::channels_of(const std::vector<float>& mean,
                                                       const std::vector<float>& std,
                                                       std::int64_t count,
                                                       const torch::Device& device) {
  Channels c;
  c.count = count;
  if (mean.empty()) return c;
  std::vector<float> scale;
  for (float sd : std) scale.push_back(sd > 0 ? 1.0f / sd : 1.0f);  // as the host's loader
  const auto n = static_cast<std::int64_t>(mean.size());
  c.mean = torch::tensor(mean).view({n, 1}).to(device);
  c.scale = torch::tensor(scale).view({n, 1}).to(device);
  return c;
}

BatchNormaliser::BatchNormaliser(const DatasetInfo& info, const torch::Device& device) {
  if (!info.named()) {
    x_ = channels_of(info.mean, info.std, info.channels(), device);
    return;
  }
  for (const InputInfo& in : info.inputs) {
    ragged_[in.name] = in.ragged;
    if (in.integer()) continue;
    const auto count = in.mean.size() > 1 ? static_cast<std::int64_t>(in.mean.size()) : 1;
    inputs_[in.name] = channels_of(in.mean, in.std, count, device);
  }
}

torch::Tensor BatchNormaliser::normalise(const torch::Tensor& x, const Channels& c) {
  torch::Tensor out = x.to(torch::kFloat32);
  if (!c.mean.defined()) return out;
  const auto shape = out.sizes().vec();
  return out.view({shape[0], c.count, -1}).sub(c.mean).mul_(c.scale).view(shape);
}

Batch BatchNormaliser::finish(Batch raw) const {
  if (!raw.raw) return raw;
  torch::NoGradGuard no_grad;
  raw.raw = false;
  if (raw.x.defined()) {
    raw.x = normalise(raw.x, x_);
    return raw;
  }
  for (std::size_t i = 0; i < raw.inputs.size(); ++i) {
    auto& [name, tensor] = raw.inputs[i];
    const auto found = inputs_.find(name);
    if (found == inputs_.end()) continue;  // integers, masks
    if (!ragged_.at(name)) {
      tensor = normalise(tensor, found->second);
      continue;
    }
    // A ragged input's padding stays 0, as the host leaves it: its mask follows it.
    const torch::Tensor& mask = raw.inputs[i + 1].second;
    const Channels& c = found->second;
    if (c.mean.defined())
      tensor = torch::where(mask.to(torch::kBool), (tensor - c.mean[0][0]) * c.scale[0][0],
                            torch::zeros_like(tensor));
  }
  return raw;
}

}  // namespace slimtrain::data
