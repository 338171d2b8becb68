#pragma once
/**
 * @brief A step's update and its non-finite vote, in one of two ways (Session::device_step):
 *
 * - on the host (CPU): each micro-batch's loss is read, the control plane's step reduction
 *   carries whether it is finite, and the host decides whether the optimizer steps (a non-finite
 *   loss on any rank, or a non-finite gradient norm when clipping, skips it everywhere).
 * - on the device (the GPU step): nothing is read back in a steady step. The losses' flags travel
 *   on the data plane with the gradients (step_flags.hpp), clipping computes the norm on the
 *   device, the fused optimizer skips on the found_inf flag, and the host learns the outcome a step
 *   late (or when it settles before an evaluation, a checkpoint or the end), undoing its own step
 *   counts for a skipped step and naming it as the host's step would.
 *
 * Either way the skipped steps count against --max-nonfinite-steps (nonfinite_steps.hpp).
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/train/nonfinite_steps.hpp"
#include "slimtrain/train/session.hpp"
#include "slimtrain/train/step_control.hpp"
#include "slimtrain/train/step_flags.hpp"

namespace slimtrain::train {

class StepUpdate {
 public:
  StepUpdate(Session& s, NonfiniteSteps& nonfinite, std::vector<std::string> hosts);

  /** @brief Before the step's first micro-batch. */
  void begin(std::int64_t step);
  /** @brief After each micro-batch's backward, with its (undivided) loss. */
  void add_loss(const torch::Tensor& loss);
  /** @brief After the gradients are launched: on the device, the losses' flags follow them. */
  void launched();
  /** @brief The vote's loss (log steps) and non-finite fields, over `micro_batches`. */
  void fill(StepVote& vote, bool log_now, std::int64_t micro_batches) const;
  /** @brief After the step's decision: on the device, the previous step's outcome is learned. */
  void decided();
  /** @brief After the gradients arrived: the optimizer steps, or the step is skipped. */
  void apply(const StepDecision& decision, std::int64_t step);
  /** @brief Before anything reads the weights or the run ends: no outcome left unlearned. */
  void settle();

 private:
  void apply_on_host(const StepDecision& decision, std::int64_t step);
  void apply_on_device();
  void learned(const StepOutcome& outcome);
  /** @brief "the loss is not finite on rank 1 (node7)" */
  std::string nonfinite_loss(int rank) const;
  void gather_weights();

  Session& s_;
  NonfiniteSteps& nonfinite_;
  std::vector<std::string> hosts_;
  std::unique_ptr<StepFlags> flags_;  ///< on the device only
  double loss_sum_ = 0.0;             ///< on the host only
};

}  // namespace slimtrain::train
