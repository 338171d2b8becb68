#include "slimtrain/train/grad_sync.hpp"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <algorithm>

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

GradCompression parse_grad_compression(const std::string& name) {
  if (name == "none") return GradCompression::none;
  if (name == "bf16") return GradCompression::bf16;
  SLIMTRAIN_THROW(ConfigError, "--grad-compression must be none or bf16, not '", name, "'");
}

const char* to_string(GradCompression c) {
  return c == GradCompression::bf16 ? "bf16" : "fp32";
}

OverlapChoice choose_overlap(std::size_t buckets, bool gpu) {
  if (!gpu)
    return {false,
            "on CPU a step's buckets run once its control decision has checked them on every "
            "rank (Open MPI corrupts memory on mismatched all-reduces), so none can start during "
            "backward"};
  if (buckets < 2)
    return {true,
            "one gradient bucket: it starts with backward's last gradient, no backward left "
            "to slow"};
  return {true, "GPU compute leaves the CPU to issue NCCL work during backward"};
}

std::size_t GradientSync::count_buckets(const std::vector<torch::Tensor>& params,
                                        std::size_t bucket_bytes) {
  std::size_t buckets = 0, current = 0;
  for (std::size_t k = params.size(); k-- > 0;) {
    const std::size_t bytes = static_cast<std::size_t>(params[k].numel()) * sizeof(float);
    if (buckets == 0 || (current > 0 && current + bytes > bucket_bytes)) {
      ++buckets;
      current = 0;
    }
    current += bytes;
  }
  return buckets;
}

GradientSync::GradientSync(std::vector<torch::Tensor> params, comm::DataPlane& plane,
                           std::size_t bucket_bytes, bool overlap, GradCompression compression)
    : params_(std::move(params)), plane_(plane), overlap_(overlap), compression_(compression) {
  slots_.resize(params_.size());
  arrived_.assign(params_.size(), 0);
  std::size_t current_bytes = 0;
  for (std::size_t k = params_.size(); k-- > 0;) {
    const torch::Tensor& p = params_[k];
    if (p.scalar_type() != torch::kFloat32)
      SLIMTRAIN_THROW(ConfigError, "gradient sync: parameter ", k, " is ", p.scalar_type(),
                      "; only float32 parameters are supported");
    const std::size_t bytes = static_cast<std::size_t>(p.numel()) * sizeof(float);
    if (buckets_.empty() || (current_bytes > 0 && current_bytes + bytes > bucket_bytes)) {
      buckets_.emplace_back();
      current_bytes = 0;
    }
    Bucket& b = buckets_.back();
    slots_[k] = Slot{buckets_.size() - 1, static_cast<std::int64_t>(current_bytes / sizeof(float)),
                     p.numel()};
    b.params.push_back(k);
    current_bytes += bytes;
  }
  for (Bucket& b : buckets_) {
    std::int64_t numel = 0;
    for (std::size_t k : b.params) numel += params_[k].numel();
    b.flat = torch::zeros({numel}, params_[b.params.front()].options().requires_grad(false));
    if (compression_ == GradCompression::bf16) b.wire = torch::zeros_like(b.flat, torch::kBFloat16);
  }
  // Each parameter's .grad is its slice of the bucket, with the parameter's own strides (a
  // channels-last weight gets a channels-last gradient, as autograd's layout contract asks), so
  // autograd accumulates into the bucket and the averages need no copy back. A plain alias (not
  // an autograd view) keeps Optimizer::zero_grad() working.
  grad_views_.resize(params_.size());
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const Slot& s = slots_[k];
    const torch::Tensor& p = params_[k];
    torch::Tensor flat = buckets_[s.bucket].flat;
    float* at = flat.data_ptr<float>() + s.offset;
    grad_views_[k] = p.is_non_overlapping_and_dense()
                         ? torch::from_blob(
                               at, p.sizes(), p.strides(), [flat](void*) {}, flat.options())
                         : torch::from_blob(
                               at, p.sizes(), [flat](void*) {}, flat.options());
  }
  if (overlap_) {
    // After the accumulation, not before: the gradient is in the bucket when the hook runs.
    for (std::size_t k = 0; k < params_.size(); ++k) {
      auto accumulator = torch::autograd::impl::grad_accumulator(params_[k]);
      hook_keys_.push_back(
          accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
              [this, k, alive = alive_](const torch::autograd::variable_list& outputs,
                                        const torch::autograd::variable_list&) {
                if (*alive) on_accumulated(k);
                return outputs;
              })));
      accumulators_.push_back(std::move(accumulator));
    }
  }
}

GradientSync::~GradientSync() {
  *alive_ = false;
  for (std::size_t k = 0; k < accumulators_.size(); ++k)
    accumulators_[k]->del_post_hook(hook_keys_[k]);
}

std::size_t GradientSync::bucket_bytes_max() const {
  std::size_t most = 0;
  for (const Bucket& b : buckets_)
    most = std::max(most, static_cast<std::size_t>(b.flat.numel()) * sizeof(float));
  return most;
}

std::size_t GradientSync::bucket_bytes_total() const {
  std::size_t total = 0;
  for (const Bucket& b : buckets_) {
    total += static_cast<std::size_t>(b.flat.nbytes());
    if (b.wire.defined()) total += static_cast<std::size_t>(b.wire.nbytes());
  }
  return total;
}

std::size_t GradientSync::wire_bytes_per_step() const {
  std::size_t total = 0;
  for (const Bucket& b : buckets_)
    total += static_cast<std::size_t>(b.flat.numel()) *
             (compression_ == GradCompression::bf16 ? 2 : sizeof(float));
  return total;
}

void GradientSync::prepare() {
  torch::NoGradGuard no_grad;
  for (Bucket& b : buckets_) b.flat.zero_();
  for (std::size_t k = 0; k < params_.size(); ++k) params_[k].mutable_grad() = grad_views_[k];
  std::fill(arrived_.begin(), arrived_.end(), 0);
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.ready = false;
    b.work.reset();
  }
  next_launch_ = 0;
  accumulating_ = false;
}

// Autograd adds into .grad in place, which is the bucket slice; should it have replaced .grad with
// a tensor of its own (a sum it could not form in place), the value is moved into the bucket.
void GradientSync::adopt(std::size_t index) {
  torch::Tensor& grad = params_[index].mutable_grad();
  if (grad.defined() && grad.is_same(grad_views_[index])) return;
  torch::NoGradGuard no_grad;
  if (grad.defined()) grad_views_[index].copy_(grad);  // else the slice is still zero
  grad = grad_views_[index];
}

void GradientSync::on_accumulated(std::size_t index) {
  if (accumulating_) return;  // it stays in the bucket; the step's last backward starts it
  if (arrived_[index])
    SLIMTRAIN_THROW(
        ConfigError, "gradient sync: parameter ", index,
        " received two gradients in one backward (a shared weight); run with --overlap false");
  arrived_[index] = 1;
  adopt(index);
  Bucket& b = buckets_[slots_[index].bucket];
  if (--b.pending == 0) mark_ready(slots_[index].bucket);
}

void GradientSync::mark_ready(std::size_t bucket) {
  buckets_[bucket].ready = true;
  launch_ready();
}

void GradientSync::launch_ready() {
  // Strict index order: every rank issues the same collectives in the same order.
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].ready) {
    start(buckets_[next_launch_]);
    ++next_launch_;
  }
}

void GradientSync::start(Bucket& b) {
  comm::OpOptions options;
  options.tag = "grad-bucket";
  if (compression_ == GradCompression::none) {
    b.work = plane_.all_reduce_async(b.flat, comm::ReduceOp::avg, options);
    return;
  }
  // Round to nearest even (LibTorch's float -> bfloat16); the average is taken after widening.
  torch::NoGradGuard no_grad;
  b.wire.copy_(b.flat);
  b.work = plane_.all_reduce_async(b.wire, comm::ReduceOp::sum, options);
}

void GradientSync::launch() {
  torch::NoGradGuard no_grad;
  for (std::size_t bi = 0; bi < buckets_.size(); ++bi) {
    Bucket& b = buckets_[bi];
    if (b.ready) continue;
    // Without overlap, or for parameters that got no gradient this step (unused branches): the
    // gradients are in the bucket already, unless autograd replaced a .grad.
    for (std::size_t k : b.params)
      if (!(overlap_ && arrived_[k])) adopt(k);
    b.ready = true;
  }
  launch_ready();
}

void GradientSync::wait() {
  for (Bucket& b : buckets_) {
    if (!b.work) SLIMTRAIN_THROW(Error, "gradient sync: wait() before launch()");
    b.work->wait();
    if (compression_ == GradCompression::bf16) {
      torch::NoGradGuard no_grad;
      b.flat.copy_(b.wire).div_(static_cast<double>(plane_.size()));
    }
    for (std::size_t k : b.params) params_[k].mutable_grad() = grad_views_[k];
  }
}

}  // namespace slimtrain::train
