#pragma once
/**
 * @brief Test only: SLIMTRAIN_TEST_SYNC_DEBUG=FROM-TO turns CUDA's synchronisation debug mode to
 * "error" (c10::cuda::warning_state(), PyTorch's torch.cuda.set_sync_debug_mode("error")) from
 * the start of step FROM to the start of step TO, so any call in those steps that makes the host
 * wait for the device (a read-back, a blocking copy) throws and ends the run: the gpu tier's proof
 * that a steady step never waits (tests/gpu/sync_free.sh). Evaluations and checkpoints stay outside
 * the window. Without a CUDA LibTorch, or unset, nothing.
 */
#include <cstdint>

namespace slimtrain::train {

class SyncDebugWindow {
 public:
  /** @brief Reads SLIMTRAIN_TEST_SYNC_DEBUG (ConfigError when it is not FROM-TO). */
  SyncDebugWindow();
  /** @brief At the start of `step`: turns the mode on at FROM and off at TO. */
  void at_step(std::int64_t step) const;
  /** @brief Whether a window was asked for. */
  bool armed() const { return from_ > 0; }

 private:
  std::int64_t from_ = 0, to_ = 0;
};

}  // namespace slimtrain::train
