#include "slimtrain/train/step_ahead_copy.hpp"

#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace slimtrain::train {
namespace {

class DeviceCopyStreams final : public CopyStreams {
 public:
  explicit DeviceCopyStreams(const torch::Device& device)
      : device_(device),
        guard_(device.type()),
        side_(guard_.getStreamFromGlobalPool(device, /*isHighPriority=*/false)) {}

  torch::Tensor allocate_on_side(const torch::Tensor& host) override {
    c10::StreamGuard on_side(side_);  // the allocator ties the block to the current stream
    return torch::empty(host.sizes(), host.options().device(device_).pinned_memory(false));
  }
  void copy_on_side(const torch::Tensor& device, const torch::Tensor& host) override {
    c10::StreamGuard on_side(side_);
    device.copy_(host, /*non_blocking=*/true);
  }
  std::shared_ptr<void> mark_side() override {
    auto mark = std::make_shared<c10::Event>(device_.type());
    mark->record(side_);
    return mark;
  }
  void step_waits(const std::shared_ptr<void>& mark) override {
    static_cast<c10::Event*>(mark.get())->block(guard_.getStream(device_));
  }
  void use_on_step(const torch::Tensor& t) override {
    guard_.recordDataPtrOnStream(t.storage().data_ptr(), guard_.getStream(device_));
  }

 private:
  torch::Device device_;
  c10::impl::VirtualGuardImpl guard_;
  c10::Stream side_;
};

}  // namespace

std::unique_ptr<CopyStreams> device_copy_streams(const torch::Device& device) {
  return std::make_unique<DeviceCopyStreams>(device);
}

CopyInFlight start_copy(CopyStreams& streams, const data::Batch& host) {
  const auto copy = [&](const torch::Tensor& t) {
    torch::Tensor out = streams.allocate_on_side(t);
    streams.copy_on_side(out, t);
    return out;
  };
  CopyInFlight f;
  f.batch.raw = host.raw;
  f.batch.longest_row = host.longest_row;
  f.batch.longest_length = host.longest_length;
  f.batch.y = copy(host.y);
  if (host.x.defined()) f.batch.x = copy(host.x);
  for (const auto& [name, tensor] : host.inputs) f.batch.inputs.emplace_back(name, copy(tensor));
  f.copied = streams.mark_side();
  return f;
}

data::Batch take_copy(CopyStreams& streams, CopyInFlight&& in_flight) {
  streams.step_waits(in_flight.copied);
  data::Batch b = std::move(in_flight.batch);
  streams.use_on_step(b.y);
  if (b.x.defined()) streams.use_on_step(b.x);
  for (const auto& named : b.inputs) streams.use_on_step(named.second);
  return b;
}

}  // namespace slimtrain::train
