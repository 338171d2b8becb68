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

void defer_memory(const std::vector<torch::Tensor>& weights) {
  if (open_scope == nullptr) return;
  torch::NoGradGuard no_grad;
  for (torch::Tensor w : weights) {
    // An empty tensor given the weight's shape: no storage to match it, so nothing is allocated
    // (on a GPU either); the parameter keeps its identity, as modules and optimizers hold it.
    torch::Tensor shell = torch::empty({0}, w.options().device(open_scope->device_));
    shell.unsafeGetTensorImpl()->set_sizes_contiguous(w.sizes());
    w.set_data(shell);
  }
}

bool has_memory(const torch::Tensor& t) {
  if (t.numel() == 0) return true;
  const c10::Storage& storage = t.storage();
  return storage.data() != nullptr &&
         storage.nbytes() >=
             static_cast<std::size_t>(t.numel() + t.storage_offset()) * t.element_size();
}

}  // namespace slimtrain::model
