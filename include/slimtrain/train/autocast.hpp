#pragma once
/**
 * @brief --precision bf16 on CUDA: LibTorch autocast around the forward pass only. Weights stay
 * fp32 (the master copy), backward and the gradient all-reduce run in fp32.
 */

namespace slimtrain::train {

class AutocastScope {
 public:
  /** @param bf16 true: bf16 autocast on CUDA for the scope's lifetime; false: nothing. */
  explicit AutocastScope(bool bf16);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool on_;
};

}  // namespace slimtrain::train
