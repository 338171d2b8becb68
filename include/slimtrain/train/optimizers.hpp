#pragma once
/**
 * @brief SGD and AdamW with LibTorch's arithmetic, state and checkpoint format, stepped in one of
 * two ways:
 *
 * - pieces (the host's step, on CPU): each contiguous tensor in pieces of `chunk` elements
 *   through one scratch piece: the same element-wise operations in the same order as LibTorch's
 *   own optimizers, so the results are bit-identical to theirs (tests/unit/test_optimizers.cpp),
 *   and the temporaries LibTorch's make (two the size of each parameter for AdamW: sqrt(v) and the
 *   quotient; 128 MiB for a 4096 x 4096 layer) are bounded by a piece (bench/memory). A tensor
 *   that is not contiguous (channels-last weights) is stepped whole, as LibTorch does.
 * - fused (the device's step, on a GPU): every parameter of the group in one kernel launch
 *   (LibTorch 2.x's at::_fused_sgd_ and at::_fused_adamw_, the kernels PyTorch's fused=True
 *   calls), where ~2,500 launches a step stepped ViT-B in pieces. It takes a found_inf flag on
 *   the device and changes nothing when the flag is set, so a step with a non-finite loss or
 *   gradient norm is skipped without the host reading anything. Within 1e-5 relative of the
 *   pieces (the kernels order some operations differently; tests/unit/test_optimizers.cpp).
 *
 * The state is LibTorch's (SGDParamState, AdamWParamState) under the same keys either way, so
 * checkpoints, optimizer_state.cpp and set_learning_rate see no difference; a fused AdamW keeps
 * each parameter's step count on the device as well (the kernel reads it), and the host's count,
 * which checkpoints carry, follows it through step() and undo_step().
 */
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace slimtrain::train {

/** @brief Elements per piece: 1 MiB of float32, the temporaries' bound per tensor. */
constexpr std::int64_t kOptimizerChunk = std::int64_t{1} << 18;

/** @brief Whether this LibTorch has the fused SGD and AdamW kernels (2.4 on CPU and GPU). */
bool fused_optimizers_available();

/** @brief What the two optimizers share beyond LibTorch's interface: how they step. */
class SteppedOptimizer {
 public:
  virtual ~SteppedOptimizer() = default;
  /** @brief Fused kernels from the next step on; ConfigError when LibTorch has none. */
  void use_fused(bool on);
  bool fused() const { return fused_; }
  /**
   * @brief Fused only: a float tensor of one element on the parameters' device; when nonzero at
   * run time, the next step() changes nothing (weights, moments, step counts). Undefined: none.
   */
  void set_found_inf(torch::Tensor flag) { found_inf_ = std::move(flag); }
  /**
   * @brief The host learned that the last step was skipped on the device (its found_inf was set):
   * its own step counts go back one, as the device's did. Pieces: nothing to do (the host decides
   * before it steps).
   */
  virtual void undo_step() {}

 protected:
  bool fused_ = false;
  torch::Tensor found_inf_;
};

class SGD : public torch::optim::SGD, public SteppedOptimizer {
 public:
  SGD(std::vector<torch::Tensor> params, const torch::optim::SGDOptions& options,
      std::int64_t chunk = kOptimizerChunk)
      : torch::optim::SGD(std::move(params), options), chunk_(chunk) {}
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  void step_in_pieces(torch::optim::OptimizerParamGroup& group);
  void step_fused(torch::optim::OptimizerParamGroup& group);
  std::int64_t chunk_;
};

class AdamW : public torch::optim::AdamW, public SteppedOptimizer {
 public:
  AdamW(std::vector<torch::Tensor> params, const torch::optim::AdamWOptions& options,
        std::int64_t chunk = kOptimizerChunk)
      : torch::optim::AdamW(std::move(params), options), chunk_(chunk) {}
  torch::Tensor step(LossClosure closure = nullptr) override;
  void undo_step() override;

 private:
  void step_in_pieces(torch::optim::OptimizerParamGroup& group);
  void step_fused(torch::optim::OptimizerParamGroup& group);
  /** @brief The parameter's state, made at its first step. */
  torch::optim::AdamWParamState& state_of(const torch::Tensor& param);
  std::int64_t chunk_;
  // Fused: each parameter's step count on the device, made from the host's count whenever the
  // state object is not the one it was made for (a checkpoint loaded in between).
  struct DeviceStep {
    const torch::optim::OptimizerParamState* state = nullptr;
    torch::Tensor count;
  };
  std::vector<DeviceStep> device_steps_;
  std::vector<torch::optim::AdamWParamState*> last_stepped_;  ///< by the last fused step
};

}  // namespace slimtrain::train
