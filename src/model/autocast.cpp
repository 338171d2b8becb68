#include "slimtrain/model/autocast.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

// LibTorch 2.4 made autocast per device type; 1.13 (Debian) has the CUDA-only calls, which later
// releases deprecate.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define SLIMTRAIN_AUTOCAST_PER_DEVICE 1
#endif

namespace slimtrain::model {
namespace {
void enable_autocast(bool cuda, bool on) {
#ifdef SLIMTRAIN_AUTOCAST_PER_DEVICE
  const at::DeviceType device = cuda ? at::kCUDA : at::kCPU;
  if (on) at::autocast::set_autocast_dtype(device, at::kBFloat16);
  at::autocast::set_autocast_enabled(device, on);
#else
  if (cuda) {
    if (on) at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(on);
  } else {
    if (on) at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(on);
  }
#endif
}
}  // namespace

AutocastState current_autocast() {
#ifdef SLIMTRAIN_AUTOCAST_PER_DEVICE
  const bool cuda = at::autocast::is_autocast_enabled(at::kCUDA);
  const bool cpu = at::autocast::is_autocast_enabled(at::kCPU);
#else
  const bool cuda = at::autocast::is_enabled();
  const bool cpu = at::autocast::is_cpu_enabled();
#endif
  return {cuda || cpu, cuda};
}

AutocastScope::AutocastScope(bool bf16, bool cuda) : on_(bf16), cuda_(cuda) {
  if (!on_) return;
  enable_autocast(cuda_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!on_) return;
  // The cast weights are cached for the scope only: the optimiser changes them next.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  enable_autocast(cuda_, false);
}

}  // namespace slimtrain::model
