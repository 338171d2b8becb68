#include "slimtrain/train/sharded_params.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

std::vector<OptimizedSpan> parameter_spans(const std::vector<torch::Tensor>& params,
                                           const FlatLayout& layout) {
  std::vector<OptimizedSpan> spans;
  for (std::size_t k = 0; k < params.size(); ++k)
    spans.push_back({params[k], {layout.logical_of(k), params[k].numel()}});
  return spans;
}

ShardedParams::ShardedParams(const std::vector<torch::Tensor>& params, const FlatLayout& layout,
                             int rank)
    : layout_(layout), pieces_(layout.shard(rank)) {
  if (params.empty()) SLIMTRAIN_THROW(ConfigError, "--shard: the model has no trainable parameter");
  torch::NoGradGuard no_grad;
  flat_ = torch::zeros({layout.padded_numel()}, params.front().options().requires_grad(false));
  for (std::size_t k = 0; k < params.size(); ++k) {
    torch::Tensor view = flat_.narrow(0, layout.offset_of(k), params[k].numel());
    view.copy_(params[k].detach().reshape({-1}));
    // The parameter keeps its identity (modules, TorchScript attributes, autograd) and takes the
    // buffer's memory; contiguous, since a shard is a run of row-major elements.
    params[k].set_data(view.view(params[k].sizes()));
    bucket_of_[params[k].unsafeGetTensorImpl()] = layout.bucket_of(k);
  }
  gathers_.resize(layout.buckets().size());
  for (const ShardPiece& p : pieces_) {
    torch::Tensor buffer = flat_;
    // A tensor of its own over the piece's memory (not an autograd view of the buffer): the
    // optimizer treats it as a parameter and updates the buffer in place.
    shard_.push_back(torch::from_blob(
        flat_.data_ptr<float>() + p.flat, {p.length}, [buffer](void*) {}, flat_.options()));
  }
}

std::vector<OptimizedSpan> ShardedParams::spans() const {
  std::vector<OptimizedSpan> spans;
  for (std::size_t i = 0; i < pieces_.size(); ++i) spans.push_back({shard_[i], pieces_[i].logical});
  return spans;
}

void ShardedParams::attach_grads(const std::vector<torch::Tensor>& shard_grads) {
  if (shard_grads.size() != shard_.size())
    SLIMTRAIN_THROW(Error, "--shard: ", shard_grads.size(), " gradient pieces for ", shard_.size(),
                    " weight pieces");
  for (std::size_t i = 0; i < shard_.size(); ++i) shard_[i].mutable_grad() = shard_grads[i];
}

void ShardedParams::start_gather(comm::DataPlane& plane) {
  wait_gathered();  // the previous step's, if nothing read the weights since
  comm::OpOptions options;
  options.tag = "weight-gather";
  // Buckets fill in reverse parameter order, so the last holds the first layers: the order in
  // which forward needs them. Every rank issues the same order (the desync fingerprint counts it).
  for (std::size_t i = pieces_.size(); i-- > 0;) {
    const ShardPiece& piece = pieces_[i];
    const FlatBucket& b = layout_.buckets()[piece.bucket];
    gathers_[piece.bucket] = plane.all_gather_async(flat_.narrow(0, piece.flat, piece.length),
                                                    flat_.narrow(0, b.offset, b.padded), options);
    ++in_flight_;
  }
}

void ShardedParams::await(const std::vector<torch::Tensor>& weights) {
  if (in_flight_ == 0) return;
  for (const torch::Tensor& w : weights) {
    const auto found = bucket_of_.find(w.unsafeGetTensorImpl());
    if (found == bucket_of_.end()) continue;  // frozen: not in the buffer, never gathered
    std::shared_ptr<comm::Work>& work = gathers_[found->second];
    if (!work) continue;
    const std::shared_ptr<comm::Work> waiting = std::move(work);
    --in_flight_;
    waiting->wait();  // throws past its deadline: the job ends as for any data-plane timeout
  }
}

void ShardedParams::wait_gathered() {
  for (std::shared_ptr<comm::Work>& work : gathers_) {
    if (!work) continue;
    const std::shared_ptr<comm::Work> waiting = std::move(work);
    --in_flight_;
    waiting->wait();
  }
}

torch::Tensor ShardedParams::clip_grad_norm(double max_norm, comm::DataPlane& plane) {
  torch::NoGradGuard no_grad;
  torch::Tensor squares = torch::zeros({1}, flat_.options().dtype(torch::kFloat64));
  for (const torch::Tensor& t : shard_)
    if (t.grad().defined()) squares += t.grad().to(torch::kFloat64).square().sum();
  comm::OpOptions options;
  options.tag = "grad-norm";
  plane.all_reduce(squares, comm::ReduceOp::sum, options);
  const torch::Tensor total = squares.sqrt().to(torch::kFloat32);
  const torch::Tensor scale = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (const torch::Tensor& t : shard_)
    if (t.grad().defined()) t.grad().mul_(scale);
  return total;
}

}  // namespace slimtrain::train
