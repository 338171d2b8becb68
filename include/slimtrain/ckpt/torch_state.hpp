#pragma once
/** @brief Moving a torch module's and optimizer's state into and out of a CheckpointState. */
#include <torch/torch.h>

#include <string>
#include <vector>

#include "slimtrain/ckpt/checkpoint_state.hpp"

namespace slimtrain::ckpt {

/** @brief Parameters AND buffers of `module`, cloned to contiguous CPU tensors, named prefix+name.
 */
std::vector<TensorEntry> host_copy(const torch::nn::Module& module,
                                   const std::string& prefix = "model/");

/**
 * @brief "" when `state` holds exactly `module`'s tensors (prefix+name, same shapes and dtypes),
 * else the first difference: "'fc2.weight' has shape [5, 16] in the checkpoint and [4, 16] in the
 * model".
 */
std::string first_difference(const torch::nn::Module& module, const CheckpointState& state,
                             const std::string& prefix = "model/");

/**
 * @brief Copies the tensors named prefix+<name> into `module`'s parameters and buffers. Every name
 * and shape is checked before anything is copied; a missing, extra, mis-shaped or mis-typed tensor
 * is a DataError naming the parameter (and both shapes), so a checkpoint of another model exits 2.
 */
void load_into(torch::nn::Module& module, const CheckpointState& state,
               const std::string& prefix = "model/");

/** @brief The optimizer's state as torch OutputArchive bytes (for CheckpointState::blobs). */
std::string serialize_optimizer(const torch::optim::Optimizer& optimizer);
/**
 * @brief Inverse of serialize_optimizer, the state placed on the device of the optimizer's
 * parameters; DataError when the bytes do not fit this optimizer.
 */
void deserialize_optimizer(torch::optim::Optimizer& optimizer, const std::string& bytes);

}  // namespace slimtrain::ckpt
