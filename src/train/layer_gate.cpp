#include "slimtrain/train/layer_gate.hpp"

#include <algorithm>

namespace slimtrain::train {
namespace {

// A layer fed token ids (integers, an embedding lookup): its backward reads no weight of it. A
// floating input that needs no gradient says nothing: it may be a frozen layer's output.
bool token_ids(const torch::Tensor& x) {
  return x.defined() && !x.requires_grad() && !at::isFloatingType(x.scalar_type()) &&
         !at::isComplexType(x.scalar_type());
}

}  // namespace

void LayerGate::begin_forward() {
  if (!segments_.empty()) planned_ = std::move(segments_);
  segments_.clear();
  first_use_.clear();
  input_only_ = false;
  in_forward_ = true;
  ++generation_;
}

std::vector<std::size_t> LayerGate::launch_order(std::size_t buckets) const {
  std::vector<std::size_t> order(first_use_.rbegin(), first_use_.rend());
  std::vector<char> placed(buckets, 0);
  for (const std::size_t b : order)
    if (b < buckets) placed[b] = 1;
  for (std::size_t b = 0; b < buckets; ++b)
    if (!placed[b]) order.push_back(b);
  return order;
}

std::vector<std::size_t> LayerGate::wanted(std::size_t a, std::size_t b) const {
  std::vector<std::size_t> out = a < segments_.size() ? segments_[a] : std::vector<std::size_t>{};
  const auto& more = b < segments_.size() ? segments_[b] : std::vector<std::size_t>{};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

void LayerGate::end_forward(GradientSync& sync) {
  in_forward_ = false;
  if (ordered_) return;
  sync.set_launch_order(launch_order(sync.bucket_count()));
  ordered_ = true;
}

void LayerGate::before_layer(const std::vector<torch::Tensor>& weights, const torch::Tensor& x) {
  const std::vector<std::size_t> buckets = shards_.buckets_of(weights);
  if (buckets.empty()) return;
  const bool autograd = torch::GradMode::is_enabled();
  // Evaluation (inference mode; a forward that threw never reached end_forward()): this layer's
  // weights held, every other layer's freed.
  if (!autograd && (!in_forward_ || c10::InferenceMode::is_enabled())) {
    shards_.release_except(buckets);
    shards_.prefetch(buckets);
    shards_.await(weights);
    return;
  }
  if (autograd && !in_forward_) {  // a layer recomputed in backward: its segment is gathered
    shards_.prefetch(buckets);
    shards_.await(weights);
    return;
  }
  // The first use, until end_forward() has taken it: the steps after the first skip this.
  for (std::size_t i = 0; !ordered_ && i < weights.size(); ++i) {
    const std::vector<std::size_t> of = shards_.buckets_of({weights[i]});
    if (!of.empty() && std::find(first_use_.begin(), first_use_.end(), of[0]) == first_use_.end())
      first_use_.push_back(of[0]);
  }
  const bool opens = (segments_.empty() || (x.defined() && x.requires_grad()));
  if (!opens) {  // more weights of the segment computing
    if (segments_.size() == 1) input_only_ = input_only_ && token_ids(x);
    for (const std::size_t b : buckets)
      if (std::find(segments_.back().begin(), segments_.back().end(), b) == segments_.back().end())
        segments_.back().push_back(b);
    shards_.prefetch(buckets);
    shards_.await(weights);
    return;
  }
  const std::size_t k = segments_.size();
  if (k == 0) input_only_ = token_ids(x);
  segments_.push_back(buckets);
  // The segments before are done with (until backward); the next one, as the previous forward
  // ran it, is gathered while this one computes. Freed first, so that the two are the most held.
  const std::vector<std::size_t> next =
      prefetch_ && k + 1 < planned_.size() ? planned_[k + 1] : std::vector<std::size_t>{};
  std::vector<std::size_t> keep = buckets;
  keep.insert(keep.end(), next.begin(), next.end());
  shards_.release_except(keep);
  shards_.prefetch(buckets);
  shards_.prefetch(next);
  shards_.await(weights);
  if (k > 0 && x.defined() && x.requires_grad()) {
    const std::uint64_t generation = generation_;
    x.register_hook(
        [this, k, generation](const torch::Tensor&) { after_backward_of(k, generation); });
  }
}

void LayerGate::after_backward_of(std::size_t k, std::uint64_t generation) {
  if (generation != generation_ || k == 0 || k > segments_.size()) return;  // an older graph's
  // Segment k has its gradients: segment k - 1 computes next, k - 2 after it.
  if (k == 1 && input_only_) {  // its backward reads no weight of it
    shards_.release_except({});
    return;
  }
  std::size_t ahead = prefetch_ && k >= 2 ? k - 2 : k - 1;
  if (ahead == 0 && input_only_) ahead = k - 1;  // not gathered ahead either
  shards_.release_except(wanted(k - 1, ahead));
  shards_.prefetch(segments_[k - 1]);
  shards_.prefetch(segments_[ahead]);
  shards_.await_buckets(segments_[k - 1]);
}

}  // namespace slimtrain::train
