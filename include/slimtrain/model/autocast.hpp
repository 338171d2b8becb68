#pragma once
/**
 * @brief --precision bf16: LibTorch autocast around the forward pass only, on CUDA or on a CPU
 * with native bf16 (train/precision.hpp decides). Weights stay fp32 (the master copy); backward
 * runs each op in the dtype its forward ran in, and gradients and their all-reduce are fp32.
 */

namespace slimtrain::model {

/** @brief Whether bf16 autocast is on now, and on which device (an AutocastScope's arguments). */
struct AutocastState {
  bool bf16 = false;
  bool cuda = false;
};
AutocastState current_autocast();

class AutocastScope {
 public:
  /** @param bf16 true: bf16 autocast on `cuda` or CPU for the scope's lifetime; false: nothing. */
  AutocastScope(bool bf16, bool cuda);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool on_;
  bool cuda_;
};

}  // namespace slimtrain::model
