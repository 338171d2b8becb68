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
  }
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

void ShardedParams::gather(comm::DataPlane& plane) {
  comm::OpOptions options;
  options.tag = "weight-gather";
  std::vector<std::shared_ptr<comm::Work>> works;
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    const FlatBucket& b = layout_.buckets()[pieces_[i].bucket];
    works.push_back(plane.all_gather_async(flat_.narrow(0, pieces_[i].flat, pieces_[i].length),
                                           flat_.narrow(0, b.offset, b.padded), options));
  }
  for (const auto& work : works) work->wait();
}

double ShardedParams::clip_grad_norm(double max_norm, comm::DataPlane& plane) {
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
  return total.item<double>();
}

}  // namespace slimtrain::train
