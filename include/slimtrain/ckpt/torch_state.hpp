#pragma once
/** @brief Moving a torch module's and optimizer's state into and out of a CheckpointState. */
#include <torch/torch.h>

#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slimtrain/ckpt/checkpoint_state.hpp"

namespace slimtrain::ckpt {

/**
 * @brief The key under which LibTorch's optimizers keep a parameter's state in
 * Optimizer::state(): its TensorImpl's address, as text (std::string) up to LibTorch 2.0 and as
 * the pointer itself (void*) since. The same code compiles against either.
 */
using OptimizerStateKey =
    std::decay_t<decltype(std::declval<const torch::optim::Optimizer&>().state())>::key_type;

template <typename Key>
Key optimizer_state_key_as(c10::TensorImpl* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;  // what c10::guts::to_string made of the pointer (LibTorch 1.x)
    text << static_cast<const void*>(impl);
    return text.str();
  } else {
    return impl;
  }
}

/** @brief `param`'s key in Optimizer::state() (OptimizerStateKey). */
inline OptimizerStateKey optimizer_state_key(const torch::Tensor& param) {
  return optimizer_state_key_as<OptimizerStateKey>(param.unsafeGetTensorImpl());
}

/** @brief Parameters AND buffers of `module`, cloned to contiguous CPU tensors, named prefix+name;
 * a tensor found in `copied` (by its TensorImpl) is taken from there, already copied (--shard
 * parameters copies each bucket's weights while they are gathered). */
std::vector<TensorEntry> host_copy(
    const torch::nn::Module& module, const std::string& prefix = "model/",
    const std::unordered_map<const void*, torch::Tensor>& copied = {},
    const std::set<std::string>& left_out = {});

/** @brief The names of `module`'s parameters that do not train (requires_grad false): what a
 * --lora checkpoint leaves to its base model (host_copy's `left_out`, load_into's `may_lack`). */
std::set<std::string> frozen_parameter_names(const torch::nn::Module& module);

/**
 * @brief "" when `state` holds exactly `module`'s tensors (prefix+name, same shapes and dtypes),
 * else the first difference: "'fc2.weight' has shape [5, 16] in the checkpoint and [4, 16] in the
 * model".
 */
std::string first_difference(const torch::nn::Module& module, const CheckpointState& state,
                             const std::string& prefix = "model/",
                             const std::set<std::string>& may_lack = {});

/**
 * @brief Copies the tensors named prefix+<name> into `module`'s parameters and buffers. Every name
 * and shape is checked before anything is copied; a missing, extra, mis-shaped or mis-typed tensor
 * is a DataError naming the parameter (and both shapes), so a checkpoint of another model exits 2.
 * A deferred tensor (read_checkpoint's `defer`) is checked and not copied: its reader fills it.
 */
void load_into(torch::nn::Module& module, const CheckpointState& state,
               const std::string& prefix = "model/", const std::set<std::string>& may_lack = {});

/** @brief The optimizer's state as torch OutputArchive bytes (for CheckpointState::blobs). */
std::string serialize_optimizer(const torch::optim::Optimizer& optimizer);
/**
 * @brief Inverse of serialize_optimizer, the state placed on the device of the optimizer's
 * parameters; DataError when the bytes do not fit this optimizer.
 */
void deserialize_optimizer(torch::optim::Optimizer& optimizer, const std::string& bytes);

}  // namespace slimtrain::ckpt
