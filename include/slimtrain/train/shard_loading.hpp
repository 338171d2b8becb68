#pragma once
/**
 * @brief --shard parameters from an hf:DIR checkpoint: the decoder's weights are made without
 * memory (model/deferred_weights.hpp), every rank checks the checkpoint's names and shapes from
 * its headers, and each reads only the elements of its own pieces (ShardedParams' PieceSource).
 * No rank holds the model whole: at most its shard and one layer while it is made.
 */
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "slimtrain/model/hf/pretrained.hpp"
#include "slimtrain/model/model_spec.hpp"
#include "slimtrain/train/flat_layout.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace slimtrain::train {

struct ShardLoading {
  model::hf::WeightSource source;
  std::map<const void*, std::string> stored;  ///< a parameter's TensorImpl -> its tensor's name
};

/** @brief Whether a run reads its checkpoint into shards: an hf model with --shard parameters. */
bool loads_into_shards(const model::ModelSpec& spec, ShardMode mode);

/**
 * @brief Where each piece of `params` comes from: the checkpoint's elements for a parameter it
 * holds, the parameter's own values for one it lacks (a head made afresh, the same on every rank
 * from the seed). Error for a parameter with neither.
 */
PieceSource checkpoint_slices(const std::vector<torch::Tensor>& params, const ShardLoading& load);

}  // namespace slimtrain::train
