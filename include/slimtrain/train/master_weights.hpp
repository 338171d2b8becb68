#pragma once
/**
 * @brief --weights bf16: the trained parameters held in bfloat16, the optimizer's float32 master
 * copy of each beside them.
 *
 * The model computes in bf16 (its weights are bf16 tensors, so autocast has nothing to cast); the
 * optimizer steps float32 masters whose gradients are the float32 averages of the gradient buckets
 * (GradientSync::set_master_grads), and each step's result is cast back into the weights
 * (publish), round to nearest even. Frozen parameters have no master. Checkpoints, a resume's
 * load and the final weights see the masters (as_float32): a resumed run continues from the
 * float32 values, bit for bit as if it had not stopped.
 */
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace slimtrain::train {

struct Session;

class MasterWeights {
 public:
  /** @brief Masters copied from `params` (float32 as trained or loaded), then `params` made
   * bfloat16 in place: modules keep the same parameter objects. A parameter in `float32` stays
   * float32 and is its own master (a BatchNorm's: model/bf16_weights.hpp). */
  explicit MasterWeights(std::vector<torch::Tensor> params,
                         const std::vector<torch::Tensor>& float32 = {});

  /** @brief The float32 tensors the optimizer steps, one per parameter, in the same order. */
  const std::vector<torch::Tensor>& masters() const { return masters_; }

  /** @brief Casts every master into its parameter (after each optimizer step, and an undone one).
   */
  void publish();

  /**
   * @brief Runs `use` while the parameters show the masters' float32 values (a checkpoint's copy,
   * a resume's load into the model); after it, what `use` left in them is the masters' value and
   * the parameters are bf16 again, cast from it.
   */
  void as_float32(const std::function<void()>& use);

  /** @brief Bytes of the masters (4 per trained value held in bf16). */
  std::uint64_t master_bytes() const;

 private:
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> masters_;
  std::vector<char> kept_;  ///< per parameter: stays float32, its own master
};

/**
 * @brief --weights bf16 for the session's trainable `params`: ConfigError unless the run computes
 * in bf16 (--precision) with --shard none; logs what is held where.
 */
std::unique_ptr<MasterWeights> make_master_weights(const Session& s,
                                                   const std::vector<torch::Tensor>& params);

}  // namespace slimtrain::train
