#include "slimtrain/train/shard_loading.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/deferred_weights.hpp"

namespace slimtrain::train {

bool loads_into_shards(const model::ModelSpec& spec, ShardMode mode) {
  return spec.name == "hf" && mode == ShardMode::parameters;
}

PieceSource checkpoint_slices(const std::vector<torch::Tensor>& params, const ShardLoading& load) {
  return [&params, &load](std::size_t k, std::int64_t from, std::int64_t count) {
    const auto found = load.stored.find(params[k].unsafeGetTensorImpl());
    if (found != load.stored.end()) return load.source.read_elements(found->second, from, count);
    if (!model::has_memory(params[k]))
      SLIMTRAIN_THROW(Error, "--shard parameters: trainable parameter ", k,
                      " was made without memory and ", load.source.where, " does not hold it");
    return params[k].detach().reshape({-1}).narrow(0, from, count);
  };
}

}  // namespace slimtrain::train
