#pragma once
/**
 * @brief The device step's non-finite vote and loss (the GPU step: docs/training.md, "The GPU
 * step"), which the host reads a step late instead of in the step.
 *
 * The host's step reads the loss after every backward, votes on it over the control plane and
 * skips the optimizer when any rank's is not finite. On a GPU that read drains the device's queue
 * every step. Here, instead, every rank marks its own slot of a small flag vector on the device
 * when its loss is not finite; the vector is summed on the data plane with the gradients, so every
 * rank holds the same flags; the optimizer's found_inf is set from them (and from a non-finite
 * gradient norm when clipping), and the fused kernels skip the update on the device, alike on
 * every rank. After the step the flags and the loss are copied into pinned host memory without
 * waiting, and the host learns them at the next step (learn()), or when it settles before an
 * evaluation or a checkpoint: the skipped step is named, counted against --max-nonfinite-steps and
 * logged one step late, with the same words and events as the host's step.
 */
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "slimtrain/comm/data_plane.hpp"

namespace slimtrain::train {

/** @brief What the host learns of a step the device took. */
struct StepOutcome {
  std::int64_t step = 0;
  std::optional<int> nonfinite_rank;  ///< the lowest rank whose loss was not finite
  bool nonfinite_norm = false;        ///< the gradient norm was not finite (clipping on)
  double loss = 0.0;                  ///< this rank's loss, summed over the micro-batches
  bool skipped() const { return nonfinite_rank.has_value() || nonfinite_norm; }
};

class StepFlags {
 public:
  /** @brief For tensors on `device`; `rank` marks its slot of `world`. */
  StepFlags(const torch::Device& device, int rank, int world);
  ~StepFlags();
  StepFlags(const StepFlags&) = delete;
  StepFlags& operator=(const StepFlags&) = delete;

  /** @brief Before the step's first micro-batch. */
  void begin_step(std::int64_t step);
  /** @brief After each micro-batch's backward: its loss (detached here). */
  void add_loss(const torch::Tensor& loss);
  /** @brief After the step's gradients are launched: the ranks' flags summed on the data plane. */
  void reduce(comm::DataPlane& plane);
  /** @brief This step's loss, read now: a synchronisation, for log steps only. */
  double loss_now() const;
  /**
   * @brief The optimizer's found_inf (a float scalar on the device): the reduced flags, or a
   * `grad_norm` that is not finite (undefined: not clipping). Waits for reduce()'s operation.
   */
  torch::Tensor found_inf(const torch::Tensor& grad_norm = {});
  /** @brief After the optimizer step: the step's outcome starts its copy to the host. */
  void publish();
  /**
   * @brief The outcome of the step published last, once: waits for its copy (usually done: the
   * device is a step behind at most); nullopt when nothing is pending.
   */
  std::optional<StepOutcome> learn();

 private:
  struct Copy;  // the pinned buffer and the event that says it is written
  torch::Device device_;
  int rank_, world_;
  std::int64_t step_ = 0, published_step_ = 0;
  torch::Tensor flags_;     ///< [world] float: nonzero where that rank's loss was not finite
  torch::Tensor loss_;      ///< this step's loss sum (float scalar)
  torch::Tensor bad_norm_;  ///< 1 when the gradient norm was not finite (float scalar)
  std::shared_ptr<comm::Work> reduced_;
  std::unique_ptr<Copy> copy_;
  bool pending_ = false;
};

}  // namespace slimtrain::train
