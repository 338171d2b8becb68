#pragma once
/**
 * @brief --shard parameters' checkpoints, written by the ranks that hold the weights: each rank
 * stages its pieces as a file of its own (ckpt::weights_file_name, beside its optimizer shard),
 * and rank 0's writer makes each trained tensor of tensors.bin from those files in turn. No rank
 * gathers the model, and the checkpoint is the same as any other: every reader reads it as it is.
 */
#include <string>
#include <unordered_map>
#include <vector>

#include "slimtrain/ckpt/checkpoint_state.hpp"
#include "slimtrain/ckpt/optimizer_shards.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/train/flat_layout.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace slimtrain::train {

/** @brief Whether every element of `t` is finite, a megabyte at a time (isfinite's temporaries
 * are the size of its input). */
bool all_finite(const torch::Tensor& t);

/** @brief This rank's pieces of the weights as they are now, a float32 host copy by logical
 * range: what it stages for a checkpoint while training goes on. */
ckpt::FlatOptimizerState weight_pieces(const ShardedParams& shards);

/** @brief Collective (control plane): "" when every rank's pieces are finite, else which rank's
 * hold a NaN or an infinity (the lowest). */
std::string nonfinite_pieces(const ShardedParams& shards, comm::ControlPlane& control);

/** @brief How a checkpoint names each of `trained` (trainable parameters of `model`):
 * "model/NAME" -> its index in `trained`. */
std::unordered_map<std::string, std::size_t> checkpoint_names(
    const torch::nn::Module& model, const std::vector<torch::Tensor>& trained);

/**
 * @brief Rank 0: the checkpoint's "model/" entries, in host_copy's order; the trained weights
 * (`trained`, in the layout's order) deferred, each made by the writer from the `writers` ranks'
 * weight files, the rest (buffers, frozen weights) copied now.
 */
std::vector<ckpt::TensorEntry> entries_from_weight_files(const torch::nn::Module& model,
                                                         const std::vector<torch::Tensor>& trained,
                                                         const FlatLayout& layout, int writers);

}  // namespace slimtrain::train
