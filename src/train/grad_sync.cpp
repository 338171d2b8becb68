#include "slimtrain/train/grad_sync.hpp"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <algorithm>

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

std::size_t GradientSync::count_buckets(const std::vector<torch::Tensor>& params,
                                        std::size_t bucket_bytes) {
  std::vector<std::int64_t> numels;
  for (const torch::Tensor& p : params) numels.push_back(p.numel());
  return FlatLayout(numels, bucket_bytes, 1).buckets().size();
}

GradientSync::GradientSync(std::vector<torch::Tensor> params, comm::DataPlane& plane,
                           const FlatLayout& layout, ShardMode shard, bool overlap,
                           GradCompression compression)
    : params_(std::move(params)),
      plane_(plane),
      layout_(layout),
      shard_(shard),
      overlap_(overlap),
      compression_(compression) {
  arrived_.assign(params_.size(), 0);
  sunk_.assign(params_.size(), 0);
  fresh_.assign(params_.size(), 0);
  for (std::size_t k = 0; k < params_.size(); ++k) index_of_[params_[k].unsafeGetTensorImpl()] = k;
  // A bf16 parameter (--weights bf16) has a float32 master: its gradient is added into the float32
  // bucket as it comes and dropped, and the bucket's slice is the master's .grad.
  cast_.assign(params_.size(), 0);
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const bool bf16 = params_[k].scalar_type() == torch::kBFloat16;
    if (params_[k].scalar_type() != torch::kFloat32 && !(bf16 && shard_ == ShardMode::none))
      SLIMTRAIN_THROW(ConfigError, "gradient sync: parameter ", k, " is ", params_[k].scalar_type(),
                      "; only float32 parameters are supported",
                      bf16 ? " with --shard (bf16 ones need --shard none)" : "");
    cast_[k] = bf16 ? 1 : 0;
  }
  if (shard_ == ShardMode::none && layout_.world() != 1)
    SLIMTRAIN_THROW(Error, "gradient sync: an unsharded layout has world size 1");
  if (shard_ != ShardMode::none && layout_.world() != plane_.size())
    SLIMTRAIN_THROW(Error, "gradient sync: a layout for ", layout_.world(), " ranks on ",
                    plane_.size());
  const auto options = params_.empty()
                           ? torch::TensorOptions()
                           : params_.front().options().dtype(torch::kFloat32).requires_grad(false);
  for (const FlatBucket& fb : layout_.buckets()) {
    Bucket b;
    b.params = fb.params;
    b.offset = fb.offset;
    b.padded = fb.padded;
    const torch::Tensor& first = params_[fb.params.front()];
    // Not with --shard optimizer, whose gradient pieces are views of lasting buckets: adopting
    // there measured worse (bench/memory at np 2: 1.40 against 1.26 of the state).
    b.adopts = shard_ == ShardMode::none && fb.params.size() == 1 && !cast_[fb.params.front()] &&
               first.is_contiguous() && first.numel() == fb.padded;
    if (shard_ != ShardMode::gradients && !b.adopts) {
      b.flat = torch::zeros({fb.padded}, options);
      if (compression_ == GradCompression::bf16)
        b.wire = torch::zeros_like(b.flat, torch::kBFloat16);
    }
    buckets_.push_back(std::move(b));
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    order_.push_back(i);
    position_.push_back(i);
  }
  const std::vector<ShardPiece> mine = layout_.shard(plane_.rank());
  for (std::size_t i = 0; shard_ != ShardMode::none && i < buckets_.size(); ++i) {
    if (shard_ == ShardMode::optimizer) {
      shard_grads_.push_back(
          buckets_[i].flat.narrow(0, mine[i].flat - buckets_[i].offset, mine[i].length));
      continue;
    }
    shard_grads_.push_back(torch::zeros({mine[i].length}, options));
    if (compression_ == GradCompression::bf16)
      shard_wire_.push_back(torch::zeros({mine[i].length}, options.dtype(torch::kBFloat16)));
  }
  // Each parameter's .grad is its slice of the bucket, with the parameter's own strides (a
  // channels-last weight gets a channels-last gradient, as autograd's layout contract asks), so
  // autograd accumulates into the bucket and the averages need no copy back. A plain alias (not
  // an autograd view) keeps Optimizer::zero_grad() working.
  grad_views_.resize(params_.size());
  for (std::size_t k = 0; shard_ != ShardMode::gradients && k < params_.size(); ++k)
    if (!buckets_[layout_.bucket_of(k)].adopts)
      grad_views_[k] = slice(k, buckets_[layout_.bucket_of(k)].flat);
  const bool any_cast = std::find(cast_.begin(), cast_.end(), 1) != cast_.end();
  if (overlap_ || any_cast) {
    // After the accumulation, not before: the gradient is in .grad when the hook runs. Without
    // overlap, only to move a bf16 gradient into float32 at once (micro-batches add up there).
    for (std::size_t k = 0; k < params_.size(); ++k) {
      auto accumulator = torch::autograd::impl::grad_accumulator(params_[k]);
      hook_keys_.push_back(
          accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
              [this, k, alive = alive_](const torch::autograd::variable_list& outputs,
                                        const torch::autograd::variable_list&) {
                if (!*alive) return outputs;
                if (overlap_)
                  on_accumulated(k);
                else if (cast_[k])
                  move_in(k);
                return outputs;
              })));
      accumulators_.push_back(std::move(accumulator));
    }
  }
}

torch::Tensor GradientSync::slice(std::size_t index, const torch::Tensor& flat) const {
  const torch::Tensor& p = params_[index];
  const Bucket& b = buckets_[layout_.bucket_of(index)];
  float* at = flat.data_ptr<float>() + (layout_.offset_of(index) - b.offset);
  return p.is_non_overlapping_and_dense()
             ? torch::from_blob(
                   at, p.sizes(), p.strides(), [flat](void*) {}, flat.options())
             : torch::from_blob(
                   at, p.sizes(), [flat](void*) {}, flat.options());
}

// A bucket's storage when autograd gave it none: --shard gradients, and adopted buckets for a
// parameter without a gradient this step.
torch::Tensor& GradientSync::storage(Bucket& b) {
  if (!b.flat.defined()) {
    b.flat = torch::zeros(
        {b.padded},
        params_[b.params.front()].options().dtype(torch::kFloat32).requires_grad(false));
    if (compression_ == GradCompression::bf16) b.wire = torch::empty_like(b.flat, torch::kBFloat16);
  }
  return b.flat;
}

GradientSync::~GradientSync() {
  *alive_ = false;
  for (std::size_t k = 0; k < accumulators_.size(); ++k)
    accumulators_[k]->del_post_hook(hook_keys_[k]);
}

std::size_t GradientSync::bucket_bytes_max() const {
  std::size_t most = 0;
  for (const Bucket& b : buckets_)
    most = std::max(most, static_cast<std::size_t>(b.padded) * sizeof(float));
  return most;
}

std::size_t GradientSync::bucket_bytes_total() const {
  std::size_t total = 0;
  for (const torch::Tensor& t : shard_grads_)
    if (shard_ == ShardMode::gradients) total += static_cast<std::size_t>(t.nbytes());
  for (const torch::Tensor& t : shard_wire_) total += static_cast<std::size_t>(t.nbytes());
  for (const Bucket& b : buckets_) {
    if (shard_ == ShardMode::gradients) continue;  // freed every step
    // An adopted bucket is .grad itself, made anew each step: counted as its size.
    total += static_cast<std::size_t>(b.padded) * sizeof(float);
    if (compression_ == GradCompression::bf16) total += static_cast<std::size_t>(b.padded) * 2;
  }
  return total;
}

std::size_t GradientSync::wire_bytes_per_step() const {
  std::size_t total = 0;
  for (const Bucket& b : buckets_)
    total += static_cast<std::size_t>(b.padded) *
             (compression_ == GradCompression::bf16 ? 2 : sizeof(float));
  return total;
}

void GradientSync::prepare() {
  torch::NoGradGuard no_grad;
  for (Bucket& b : buckets_) {
    if (b.adopts) {
      b.flat = torch::Tensor();  // the last step's gradient goes with .grad below
      b.wire = torch::Tensor();
    } else if (shard_ != ShardMode::gradients && !b.sink_made) {
      b.flat.zero_();  // a sink-made bucket is overwritten, or zeroed if backward skips it
    }
  }
  for (std::size_t k = 0; k < params_.size(); ++k) {
    // Undefined with --shard gradients, and for a bf16 parameter (its master's it is).
    params_[k].mutable_grad() = cast_[k] ? torch::Tensor() : grad_views_[k];
    if (cast_[k] && k < masters_.size()) masters_[k].mutable_grad() = grad_views_[k];
  }
  std::fill(arrived_.begin(), arrived_.end(), 0);
  std::fill(sunk_.begin(), sunk_.end(), 0);
  // A bucket's slice was just zeroed; an adopting bucket's .grad was dropped (undefined).
  std::fill(fresh_.begin(), fresh_.end(), shard_ == ShardMode::gradients ? 0 : 1);
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.ready = false;
    b.work.reset();
    b.pieces.clear();
  }
  next_launch_ = 0;
  weights_in_pieces_ = 0;
  accumulating_ = false;
}

// Autograd adds into .grad in place, which is the bucket slice; should it have replaced .grad with
// a tensor of its own (a sum it could not form in place), the value is moved into the bucket.
// With --shard gradients .grad is autograd's own tensor: moved into the bucket and dropped.
void GradientSync::adopt(std::size_t index) {
  torch::Tensor& grad = params_[index].mutable_grad();
  torch::NoGradGuard no_grad;
  if (shard_ == ShardMode::gradients) {
    Bucket& b = buckets_[layout_.bucket_of(index)];
    if (grad.defined() && !b.flat.defined() && b.params.size() == 1 && grad.numel() == b.padded &&
        grad.is_contiguous()) {
      // A bucket of one parameter needing no padding: autograd's own tensor is the bucket, so a
      // large weight's gradient exists once, not once here and again in a copy.
      b.flat = grad.reshape({-1});
      if (compression_ == GradCompression::bf16)
        b.wire = torch::empty_like(b.flat, torch::kBFloat16);
      grad = torch::Tensor();
      return;
    }
    torch::Tensor& flat = storage(b);
    if (grad.defined()) slice(index, flat).copy_(grad);
    grad = torch::Tensor();
    return;
  }
  Bucket& b = buckets_[layout_.bucket_of(index)];
  if (b.adopts) {
    if (!grad.defined() || !grad.is_contiguous()) {  // unused this step, or an odd layout
      const torch::Tensor made = storage(b).view(params_[index].sizes());
      if (grad.defined()) made.copy_(grad);
      grad = made;
    }
    b.flat = grad.view({-1});
    if (compression_ == GradCompression::bf16 && !b.wire.defined())
      b.wire = torch::empty_like(b.flat, torch::kBFloat16);
    return;
  }
  if (cast_[index]) {
    move_in(index);
    return;
  }
  if (b.sink_made && fresh_[index]) {  // not zeroed by prepare(), and nothing wrote it
    grad_views_[index].zero_();
    fresh_[index] = 0;
  }
  if (grad.defined() && grad.is_same(grad_views_[index])) return;
  if (grad.defined()) grad_views_[index].copy_(grad);  // else the slice is still zero
  grad = grad_views_[index];
}

// A bf16 gradient widened into the float32 bucket (zeroed by prepare()) and dropped.
void GradientSync::move_in(std::size_t index) {
  torch::Tensor& grad = params_[index].mutable_grad();
  torch::NoGradGuard no_grad;
  if (grad.defined()) grad_views_[index].add_(grad);
  grad = torch::Tensor();
}

void GradientSync::set_master_grads(std::vector<torch::Tensor> masters) {
  if (masters.size() != params_.size())
    SLIMTRAIN_THROW(Error, "gradient sync: ", masters.size(), " masters for ", params_.size(),
                    " parameters");
  masters_ = std::move(masters);
  for (std::size_t k = 0; k < params_.size(); ++k)
    if (cast_[k]) masters_[k].mutable_grad() = grad_views_[k];
}

void GradientSync::on_accumulated(std::size_t index) {
  fresh_[index] = 0;  // autograd added to .grad (or the sink did already)
  if (accumulating_) {
    if (cast_[index]) move_in(index);  // it adds up in float32, not in bf16
    return;                            // it stays in .grad; the step's last backward starts it
  }
  if (sunk_[index]) return;  // the layer handed it to the sink, which counted it
  arrive(index);
}

void GradientSync::arrive(std::size_t index) {
  if (arrived_[index])
    SLIMTRAIN_THROW(
        ConfigError, "gradient sync: parameter ", index,
        " received two gradients in one backward (a shared weight); run with --overlap false");
  arrived_[index] = 1;
  adopt(index);
  const std::size_t bucket = layout_.bucket_of(index);
  if (--buckets_[bucket].pending == 0) mark_ready(bucket);
}

void GradientSync::mark_ready(std::size_t bucket) {
  buckets_[bucket].ready = true;
  launch_ready();
}

void GradientSync::set_launch_order(std::vector<std::size_t> order) {
  std::vector<std::size_t> position(buckets_.size(), buckets_.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] < position.size() && position[order[i]] == buckets_.size()) position[order[i]] = i;
  if (order.size() != buckets_.size() ||
      std::find(position.begin(), position.end(), buckets_.size()) != position.end())
    SLIMTRAIN_THROW(ConfigError, "gradient sync: a launch order of ", order.size(),
                    " entries is not a permutation of the ", buckets_.size(), " buckets");
  order_ = std::move(order);
  position_ = std::move(position);
}

void GradientSync::launch_ready() {
  // Strict launch order: every rank issues the same collectives in the same order.
  while (next_launch_ < order_.size() && buckets_[order_[next_launch_]].ready) {
    start(buckets_[order_[next_launch_]], order_[next_launch_]);
    ++next_launch_;
  }
}

void GradientSync::start(Bucket& b, std::size_t index) {
  comm::OpOptions options;
  options.tag = "grad-bucket";
  torch::NoGradGuard no_grad;
  const bool bf16 = compression_ == GradCompression::bf16;
  // Round to nearest even (LibTorch's float -> bfloat16); the average is taken after widening.
  if (bf16) b.wire.copy_(b.flat);
  const torch::Tensor& sent = bf16 ? b.wire : b.flat;
  const comm::ReduceOp op = bf16 ? comm::ReduceOp::sum : comm::ReduceOp::avg;
  if (shard_ != ShardMode::gradients) {
    b.work = plane_.all_reduce_async(sent, op, options);
    return;
  }
  const torch::Tensor& out = bf16 ? shard_wire_[index] : shard_grads_[index];
  // At most kInFlight buckets exist at once: backward waits for the oldest reduce-scatter rather
  // than filling new buckets faster than the link drains them.
  wait_for_older(index);
  b.work = plane_.reduce_scatter_async(sent, out, op, options);
  // The operation keeps the bucket until it has finished; then its memory is free.
  b.flat = torch::Tensor();
  b.wire = torch::Tensor();
}

void GradientSync::wait_for_older(std::size_t index) {
  const std::size_t at = position_[index];
  if (at < kInFlight) return;
  Bucket& oldest = buckets_[order_[at - kInFlight]];
  if (oldest.work) oldest.work->wait();
}

void GradientSync::launch() {
  torch::NoGradGuard no_grad;
  for (std::size_t bi = 0; bi < buckets_.size(); ++bi) {
    Bucket& b = buckets_[bi];
    if (b.ready) continue;
    // Without overlap, or for parameters that got no gradient this step (unused branches): the
    // gradients are in the bucket already, unless autograd replaced a .grad.
    if (shard_ == ShardMode::gradients) storage(b);
    for (std::size_t k : b.params)
      if (!(overlap_ && arrived_[k])) adopt(k);
    b.ready = true;
  }
  launch_ready();
}

void GradientSync::wait() {
  torch::NoGradGuard no_grad;
  const double world = static_cast<double>(plane_.size());
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    Bucket& b = buckets_[i];
    if (!b.work) SLIMTRAIN_THROW(Error, "gradient sync: wait() before launch()");
    for (const std::shared_ptr<comm::Work>& round : b.pieces) round->wait();
    b.pieces.clear();
    b.work->wait();
    b.work.reset();
    if (shard_ == ShardMode::gradients) {
      if (compression_ == GradCompression::bf16) shard_grads_[i].copy_(shard_wire_[i]).div_(world);
      continue;
    }
    if (compression_ == GradCompression::bf16) b.flat.copy_(b.wire).div_(world);
    if (b.adopts) continue;  // .grad holds the average already
    for (std::size_t k : b.params)
      if (!cast_[k]) params_[k].mutable_grad() = grad_views_[k];
  }
}

}  // namespace slimtrain::train
