#include "slimtrain/train/device_batches.hpp"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace slimtrain::train {
namespace {

// `host` on `device`: allocated on the step's stream (so the caching allocator ties its memory
// to the stream that uses it), written by a copy on the current stream (the side stream).
torch::Tensor copy_to(const torch::Tensor& host, const torch::Device& device,
                      const c10::Stream& step_stream, const c10::Stream& side) {
  torch::Tensor out;
  {
    c10::StreamGuard on_step(step_stream);
    out = torch::empty(host.sizes(), host.options().device(device).pinned_memory(false));
  }
  c10::StreamGuard on_side(side);
  out.copy_(host, /*non_blocking=*/true);
  return out;
}

}  // namespace

data::BatchForm batch_form(const torch::Device& device) {
  data::BatchForm form;
  form.raw = device.is_cuda();
  form.pinned = device.is_cuda();
  return form;
}

DeviceBatches::DeviceBatches(data::TrainLoader& loader, const data::DatasetInfo& info,
                             const torch::Device& device)
    : loader_(loader), device_(device) {
  if (!device.is_cuda()) return;
  normaliser_ = std::make_unique<data::BatchNormaliser>(info, device);
  c10::impl::VirtualGuardImpl guard(device.type());
  side_ = guard.getStreamFromGlobalPool(device, /*isHighPriority=*/false);
}

DeviceBatches::~DeviceBatches() = default;

void DeviceBatches::start_epoch(std::int64_t epoch, std::int64_t skip_steps) {
  ahead_.reset();
  started_ = false;
  loader_.start_epoch(epoch, skip_steps);
}

std::optional<DeviceBatches::InFlight> DeviceBatches::fetch() {
  data::Batch host;
  if (!loader_.next(host)) return std::nullopt;
  InFlight f;
  c10::impl::VirtualGuardImpl guard(device_.type());
  const c10::Stream step_stream = guard.getStream(device_);
  f.batch.raw = host.raw;
  f.batch.longest_row = host.longest_row;
  f.batch.longest_length = host.longest_length;
  f.batch.y = copy_to(host.y, device_, step_stream, *side_);
  if (host.x.defined()) f.batch.x = copy_to(host.x, device_, step_stream, *side_);
  for (const auto& [name, tensor] : host.inputs)
    f.batch.inputs.emplace_back(name, copy_to(tensor, device_, step_stream, *side_));
  f.copied.emplace(device_.type());
  f.copied->record(*side_);
  // The pinned host tensors may go now: LibTorch's pinned allocator keeps their blocks until the
  // copies that read them have finished.
  return f;
}

bool DeviceBatches::next(data::Batch& out) {
  if (!device_.is_cuda()) return loader_.next(out);
  if (!started_) {
    ahead_ = fetch();
    started_ = true;
  }
  if (!ahead_) return false;
  InFlight taken = std::move(*ahead_);
  ahead_ = fetch();  // the next copy starts now, while this batch's step runs
  c10::impl::VirtualGuardImpl guard(device_.type());
  taken.copied->block(guard.getStream(device_));  // the step's stream waits, not the host
  out = normaliser_->finish(std::move(taken.batch));
  return true;
}

}  // namespace slimtrain::train
