#include "slimtrain/train/device_batches.hpp"

namespace slimtrain::train {

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
  streams_ = device_copy_streams(device);
}

DeviceBatches::~DeviceBatches() = default;

void DeviceBatches::start_epoch(std::int64_t epoch, std::int64_t skip_steps) {
  ahead_.reset();
  started_ = false;
  loader_.start_epoch(epoch, skip_steps);
}

std::optional<CopyInFlight> DeviceBatches::fetch() {
  data::Batch host;
  if (!loader_.next(host)) return std::nullopt;
  return start_copy(*streams_, host);
}

bool DeviceBatches::next(data::Batch& out) {
  if (!device_.is_cuda()) return loader_.next(out);
  if (!started_) {
    ahead_ = fetch();
    started_ = true;
  }
  if (!ahead_) return false;
  CopyInFlight taken = std::move(*ahead_);
  ahead_ = fetch();  // the next copy starts now, while this batch's step runs
  out = normaliser_->finish(take_copy(*streams_, std::move(taken)));
  return true;
}

}  // namespace slimtrain::train
