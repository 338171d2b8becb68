#include "slimtrain/train/autocast.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

// LibTorch 2.4 made autocast per device type; 1.13 (Debian) has the CUDA-only calls, which later
// releases deprecate.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define SLIMTRAIN_AUTOCAST_PER_DEVICE 1
#endif

namespace slimtrain::train {
namespace {
void enable_cuda_autocast(bool on) {
#ifdef SLIMTRAIN_AUTOCAST_PER_DEVICE
  if (on) at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCUDA, on);
#else
  if (on) at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  at::autocast::set_enabled(on);
#endif
}
}  // namespace

AutocastScope::AutocastScope(bool bf16) : on_(bf16) {
  if (!on_) return;
  enable_cuda_autocast(true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!on_) return;
  // The cast weights are cached for the scope only: the optimiser changes them next.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  enable_cuda_autocast(false);
}

}  // namespace slimtrain::train
