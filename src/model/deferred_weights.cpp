#include "slimtrain/model/deferred_weights.hpp"

namespace slimtrain::model {
namespace {

thread_local DeferredWeights* open_scope = nullptr;

}  // namespace

DeferredWeights::DeferredWeights(torch::Device device) : device_(device), outer_(open_scope) {
  open_scope = this;
}

DeferredWeights::~DeferredWeights() {
  open_scope = outer_;
}

torch::Tensor without_memory(torch::IntArrayRef sizes, const torch::TensorOptions& options) {
  torch::Tensor shell = torch::empty({0}, options);
  shell.unsafeGetTensorImpl()->set_sizes_contiguous(sizes);
  return shell;
}

void defer_memory(const std::vector<torch::Tensor>& weights) {
  if (open_scope == nullptr) return;
  torch::NoGradGuard no_grad;
  for (torch::Tensor w : weights) {
    // The parameter keeps its identity, as modules and optimizers hold it.
    w.set_data(without_memory(w.sizes(), w.options().device(open_scope->device_)));
  }
}

bool deferring() {
  return open_scope != nullptr;
}

bool has_memory(const torch::Tensor& t) {
  if (t.numel() == 0) return true;
  const c10::Storage& storage = t.storage();
  return storage.data() != nullptr &&
         storage.nbytes() >=
             static_cast<std::size_t>(t.numel() + t.storage_offset()) * t.element_size();
}

}  // namespace slimtrain::model
