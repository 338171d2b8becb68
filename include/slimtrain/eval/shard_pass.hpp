#pragma once
/** @brief The local half of an evaluation: this rank's exact share, no communication. */
#include <cstdint>
#include <string>

#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/metrics.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

/** @brief `model` on `batch` moved to `device`: x (layout 1), or the named inputs (layout 2). */
model::Output forward_batch(model::ClassifierImpl& model, const data::Batch& batch,
                            const torch::Device& device);

/** @brief This rank's share of a split scored sample by sample (eval --predictions). */
struct ShardPredictions {
  std::int64_t first_row = 0;  ///< the split's row of the first sample of this rank's share
  torch::Tensor logits;        ///< [n, C] float32 on the CPU, in row order
  torch::Tensor labels;        ///< [n] int64 on the CPU: the split's labels of those rows
};

/**
 * @brief Runs `model` in eval mode without gradients over this rank's share of `split`
 * (data::EvalLoader: every sample exactly once across ranks) and returns its statistics, under
 * bf16 autocast when `bf16` (the training's precision on a GPU). On a GPU the loss sum and the
 * confusion matrix accumulate on the device and are read back once, at the end; on a CPU batch by
 * batch. The model is put back in training mode afterwards, also when this throws. With
 * `predictions`, every batch's logits are also kept there (copied to the host batch by batch).
 */
EvalStats evaluate_shard(model::ClassifierImpl& model, const data::DatasetInfo& info,
                         const std::string& split, int rank, int world_size,
                         std::int64_t batch_size, bool bf16 = false,
                         ShardPredictions* predictions = nullptr);

}  // namespace slimtrain::eval
