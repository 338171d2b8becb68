#include "slimtrain/train/sharded_params.hpp"

#include <algorithm>

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
                             int rank, comm::DataPlane* gather_plane, const PieceSource& source)
    : layout_(layout), pieces_(layout.shard(rank)), plane_(gather_plane) {
  if (params.empty()) SLIMTRAIN_THROW(ConfigError, "--shard: the model has no trainable parameter");
  torch::NoGradGuard no_grad;
  const auto options = params.front().options().requires_grad(false);
  const std::size_t buckets = layout.buckets().size();
  for (std::size_t i = 0; i < pieces_.size(); ++i)
    if (pieces_[i].bucket != i)
      SLIMTRAIN_THROW(Error, "--shard: piece ", i, " is of bucket ", pieces_[i].bucket);
  gathers_.resize(buckets);
  members_.resize(buckets);
  for (std::size_t k = 0; k < params.size(); ++k) members_[layout.bucket_of(k)].push_back(k);
  // The parameter keeps its identity (modules, TorchScript attributes, autograd) and takes the
  // buffer's memory; contiguous, since a shard is a run of row-major elements. Its own memory is
  // freed as it moves, so the move holds one copy of the weights and one bucket more.
  const auto move_into = [&](std::size_t k, const torch::Tensor& view) {
    view.copy_(params[k].detach().reshape({-1}));
    params[k].set_data(view.view(params[k].sizes()));
    bucket_of_[params[k].unsafeGetTensorImpl()] = layout.bucket_of(k);
  };
  if (gather_plane == nullptr) {
    flat_ = torch::zeros({layout.padded_numel()}, options);
    for (std::size_t k = 0; k < params.size(); ++k)
      move_into(k, flat_.narrow(0, layout.offset_of(k), params[k].numel()));
    for (const ShardPiece& p : pieces_) {
      torch::Tensor buffer = flat_;
      // A tensor of its own over the piece's memory (not an autograd view of the buffer): the
      // optimizer treats it as a parameter and updates the buffer in place.
      shard_.push_back(torch::from_blob(
          flat_.data_ptr<float>() + p.flat, {p.length}, [buffer](void*) {}, flat_.options()));
    }
    return;
  }
  // --shard parameters: bucket by bucket, the rank's piece filled (from the parameters, or from
  // the checkpoint's slices where the weights were made without memory) and the parameters made
  // views of the bucket's buffer, which is then freed: from here on a bucket's weights exist while
  // its layers compute. The buffer is never written here, so its pages never become resident.
  const PieceSource from_params = [&params](std::size_t k, std::int64_t from, std::int64_t count) {
    return params[k].detach().reshape({-1}).narrow(0, from, count);
  };
  const PieceSource& values = source ? source : from_params;
  held_.assign(buckets, 0);
  for (const torch::Tensor& p : params) numels_.push_back(p.numel());
  for (std::size_t b = 0; b < buckets; ++b) {
    const FlatBucket& bucket = layout.buckets()[b];
    shard_.push_back(torch::zeros({pieces_[b].length}, options));  // padding stays zero
    fill_piece(b, values);
    bucket_buffers_.push_back(torch::empty({bucket.padded}, options));
    held_[b] = 1;
    held_bytes_ += static_cast<std::uint64_t>(bucket.padded) * 4;
    for (const std::size_t k : members_[b]) {
      params[k].set_data(bucket_buffers_[b]
                             .narrow(0, layout.offset_of(k) - bucket.offset, params[k].numel())
                             .view(params[k].sizes()));
      bucket_of_[params[k].unsafeGetTensorImpl()] = b;
    }
    free_bucket(b);
  }
}

void ShardedParams::fill_piece(std::size_t b, const PieceSource& values) {
  torch::NoGradGuard no_grad;
  const ShardPiece& piece = pieces_[b];
  for (const std::size_t k : members_[b]) {
    const std::int64_t begin = layout_.offset_of(k), end = begin + numels_[k];
    const std::int64_t lo = std::max(begin, piece.flat);
    const std::int64_t hi = std::min(end, piece.flat + piece.length);
    if (lo < hi)
      shard_[b].narrow(0, lo - piece.flat, hi - lo).copy_(values(k, lo - begin, hi - lo));
  }
}

void ShardedParams::refill(const PieceSource& values) {
  if (holds_weights()) SLIMTRAIN_THROW(Error, "ShardedParams::refill: --shard parameters only");
  finish_in_flight();
  release_except({});  // a held bucket would keep the old values
  for (std::size_t b = 0; b < shard_.size(); ++b) fill_piece(b, values);
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
  finish_in_flight();  // the previous step's, if nothing read the weights since
  if (!holds_weights()) {
    // The held weights are the step's old ones: each layer gathers its new ones when it runs.
    release_except({});
    return;
  }
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
  // A frozen weight is not in the buffer, never gathered; a throw past a deadline ends the job
  // as for any data-plane timeout.
  await_buckets(buckets_of(weights));
}

void ShardedParams::await_buckets(const std::vector<std::size_t>& buckets) {
  for (const std::size_t b : buckets) {
    if (!gathers_[b]) continue;
    const std::shared_ptr<comm::Work> waiting = std::move(gathers_[b]);
    --in_flight_;
    waiting->wait();
  }
}

void ShardedParams::wait_gathered() {
  if (!holds_weights()) {
    // Everything that reads the weights whole (evaluation, checkpoints) has them all here.
    std::vector<std::size_t> all(bucket_buffers_.size());
    for (std::size_t b = 0; b < all.size(); ++b) all[b] = b;
    prefetch(all);
  }
  finish_in_flight();
}

void ShardedParams::finish_in_flight() {
  for (std::shared_ptr<comm::Work>& work : gathers_) {
    if (!work) continue;
    const std::shared_ptr<comm::Work> waiting = std::move(work);
    --in_flight_;
    waiting->wait();
  }
}

std::vector<std::size_t> ShardedParams::buckets_of(
    const std::vector<torch::Tensor>& weights) const {
  std::vector<std::size_t> out;
  for (const torch::Tensor& w : weights) {
    const auto found = bucket_of_.find(w.unsafeGetTensorImpl());
    if (found == bucket_of_.end()) continue;  // frozen: not sharded
    if (std::find(out.begin(), out.end(), found->second) == out.end()) out.push_back(found->second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ShardedParams::hold(std::size_t b) {
  c10::StorageImpl* storage = bucket_buffers_[b].storage().unsafeGetStorageImpl();
  const std::size_t bytes = static_cast<std::size_t>(bucket_buffers_[b].numel()) * 4;
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
  held_[b] = 1;
  held_bytes_ += bytes;
  peak_held_bytes_ = std::max(peak_held_bytes_, held_bytes_);
}

void ShardedParams::free_bucket(std::size_t b) {
  // The storage keeps its identity (parameters are views of it, and autograd holds those) and
  // loses its memory; the tensors keep their shapes. Nothing reads it until hold() refills it.
  c10::StorageImpl* storage = bucket_buffers_[b].storage().unsafeGetStorageImpl();
  held_bytes_ -= static_cast<std::uint64_t>(bucket_buffers_[b].numel()) * 4;
  storage->set_data_ptr_noswap(at::DataPtr(nullptr, storage->device()));
  storage->set_nbytes(0);
  held_[b] = 0;
}

void ShardedParams::prefetch(const std::vector<std::size_t>& buckets) {
  comm::OpOptions options;
  options.tag = "layer-gather";
  for (const std::size_t b : buckets) {
    if (held_[b]) continue;  // here, or arriving
    hold(b);
    // Written by the plane alone (no tensor operation): autograd's saved weights keep their
    // version, as they hold the same values as when forward used them.
    gathers_[b] = plane_->all_gather_async(shard_[b], bucket_buffers_[b], options);
    ++in_flight_;
  }
}

void ShardedParams::release_except(const std::vector<std::size_t>& keep) {
  for (std::size_t b = 0; b < held_.size(); ++b)
    if (held_[b] && !gathers_[b] && std::find(keep.begin(), keep.end(), b) == keep.end())
      free_bucket(b);
}

torch::Tensor ShardedParams::clip_grad_norm(double max_norm, comm::DataPlane& plane) {
  torch::NoGradGuard no_grad;
  torch::Tensor squares = torch::zeros({1}, shard_.front().options().dtype(torch::kFloat64));
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
