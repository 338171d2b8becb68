#pragma once
/** @brief One batch as the model sees it. */
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace slimtrain::data {

/** @brief Tensors by input name, in the file's order (a ragged input's mask right after it). */
using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

/**
 * @brief Layout 1: x float32 [B, ...input_shape], normalised with the file's mean/std. Layout 2:
 * `inputs` instead (x undefined): fixed inputs as float32 (normalised when the input has mean/std)
 * or int64, ragged ones padded to the batch's longest (a multiple of 8) with their masks. y: int64
 * [B] either way. A raw batch (BatchForm::raw) holds x and the fixed and ragged inputs that have
 * a mean/std as stored (uint8 stays uint8), not yet normalised: BatchNormaliser finishes it,
 * on the device it was copied to.
 */
struct Batch {
  torch::Tensor x;
  torch::Tensor y;
  NamedTensors inputs;
  bool raw = false;
  /** @brief Layout 2 with a ragged input: the source row of the batch's longest sample and its
   * length as stored (before any cut), so that a batch too large to allocate names it. */
  std::int64_t longest_row = -1;
  std::int64_t longest_length = 0;
  std::int64_t size() const { return y.defined() ? y.size(0) : 0; }
};

/** @brief How a loader hands its batches over. */
struct BatchForm {
  /** @brief As stored, left for the device to convert and normalise (the GPU step). */
  bool raw = false;
  /** @brief In pinned host memory, so a copy to a GPU need not wait (a CUDA LibTorch only). */
  bool pinned = false;
  /** @brief Options for a host tensor of `type` in this form. */
  torch::TensorOptions options(torch::ScalarType type) const {
    return torch::TensorOptions().dtype(type).pinned_memory(pinned);
  }
};

}  // namespace slimtrain::data
