#include "slimtrain/train/step_flags.hpp"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/version.h>

#include <thread>

namespace slimtrain::train {

// On a GPU: pinned memory the outcome is copied into without waiting, and the event recorded
// after the copy on the step's stream. On a CPU the copy is done when it returns.
struct StepFlags::Copy {
  torch::Tensor host;
  std::optional<c10::Event> written;

  void wait() const {
    if (!written) return;
#if TORCH_VERSION_MAJOR >= 2
    written->synchronize();
#else
    while (!written->query()) std::this_thread::yield();
#endif
  }
};

StepFlags::StepFlags(const torch::Device& device, int rank, int world)
    : device_(device), rank_(rank), world_(world), copy_(std::make_unique<Copy>()) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  flags_ = torch::zeros({world}, options);
  loss_ = torch::zeros({}, options);
  bad_norm_ = torch::zeros({}, options);
  copy_->host = torch::zeros(
      {world + 2}, torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(device.is_cuda()));
  if (device.is_cuda()) copy_->written.emplace(device.type());
}

StepFlags::~StepFlags() = default;

void StepFlags::begin_step(std::int64_t step) {
  step_ = step;
  flags_.zero_();
  loss_.zero_();
  bad_norm_.zero_();
  reduced_.reset();
}

void StepFlags::add_loss(const torch::Tensor& loss) {
  torch::NoGradGuard no_grad;
  const torch::Tensor value = loss.detach().to(torch::kFloat32).reshape({});
  loss_.add_(value);
  flags_.narrow(0, rank_, 1).add_(torch::isfinite(value).logical_not().to(torch::kFloat32));
}

void StepFlags::reduce(comm::DataPlane& plane) {
  comm::OpOptions options;
  options.tag = "nonfinite-flags";
  reduced_ = plane.all_reduce_async(flags_, comm::ReduceOp::sum, options);
}

double StepFlags::loss_now() const {
  return loss_.item<double>();
}

torch::Tensor StepFlags::found_inf(const torch::Tensor& grad_norm) {
  torch::NoGradGuard no_grad;
  if (reduced_) {
    reduced_->wait();  // on a GPU: the compute stream waits for it, not the host
    reduced_.reset();
  }
  if (grad_norm.defined()) bad_norm_.copy_(torch::isfinite(grad_norm.reshape({})).logical_not());
  return ((flags_.sum() > 0).logical_or(bad_norm_ > 0)).to(torch::kFloat32);
}

void StepFlags::publish() {
  torch::NoGradGuard no_grad;
  const torch::Tensor outcome = torch::cat({flags_, bad_norm_.reshape({1}), loss_.reshape({1})});
  copy_->host.copy_(outcome, /*non_blocking=*/device_.is_cuda());
  if (copy_->written) {
    c10::impl::VirtualGuardImpl guard(device_.type());
    copy_->written->record(guard.getStream(device_));
  }
  published_step_ = step_;
  pending_ = true;
}

std::optional<StepOutcome> StepFlags::learn() {
  if (!pending_) return std::nullopt;
  pending_ = false;
  copy_->wait();
  const float* v = copy_->host.data_ptr<float>();
  StepOutcome out;
  out.step = published_step_;
  for (int r = 0; r < world_ && !out.nonfinite_rank; ++r)
    if (v[r] != 0) out.nonfinite_rank = r;
  out.nonfinite_norm = v[world_] != 0;
  out.loss = v[world_ + 1];
  return out;
}

}  // namespace slimtrain::train
