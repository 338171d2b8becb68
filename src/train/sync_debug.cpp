#include "slimtrain/train/sync_debug.hpp"

#include <cstdlib>
#include <string>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#ifdef SLIMTRAIN_TORCH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace slimtrain::train {

SyncDebugWindow::SyncDebugWindow() {
  const char* text = std::getenv("SLIMTRAIN_TEST_SYNC_DEBUG");
  if (text == nullptr || *text == '\0') return;
  const std::string window = text;
  const std::size_t dash = window.find('-');
  try {
    from_ = std::stoll(window.substr(0, dash));
    to_ = std::stoll(window.substr(dash + 1));
  } catch (const std::exception&) {
    from_ = 0;
  }
  if (dash == std::string::npos || from_ < 1 || to_ <= from_)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_TEST_SYNC_DEBUG: '", window,
                    "' is not FROM-TO (steps, FROM < TO)");
#ifndef SLIMTRAIN_TORCH_CUDA
  log::warn("SLIMTRAIN_TEST_SYNC_DEBUG: this slimtrain has no CUDA LibTorch; ignored");
  from_ = 0;
#endif
}

void SyncDebugWindow::at_step(std::int64_t step) const {
  if (!armed() || (step != from_ && step != to_)) return;
#ifdef SLIMTRAIN_TORCH_CUDA
  c10::cuda::warning_state().set_sync_debug_mode(
      step == from_ ? c10::cuda::SyncDebugMode::L_ERROR : c10::cuda::SyncDebugMode::L_DISABLED);
  log::info("SLIMTRAIN_TEST_SYNC_DEBUG: CUDA synchronisation debug mode ",
            step == from_ ? "error" : "off", " from step ", step);
#endif
}

}  // namespace slimtrain::train
