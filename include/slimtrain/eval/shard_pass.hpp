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

/** @brief How a shard is evaluated. */
struct ShardOptions {
  std::int64_t batch_size = 512;
  bool bf16 = false;  ///< the training's bf16 autocast, on a GPU
  /** @brief Classes up to which the C x C matrix is kept (eval_stats.hpp). */
  std::int64_t confusion_max_classes = kDefaultConfusionMaxClasses;
  /** @brief What a batch too large for memory is told to do (data::refuse_batch). */
  std::string batch_remedy = "evaluate with a smaller --batch-size";
  /** @brief Every rank runs as many forwards as the rank with the most batches: a model whose
   * forward gathers its weights layer by layer (--shard parameters) issues collectives in each.
   * A rank out of batches runs the split's first row and drops the result. */
  bool forwards_alike = false;
};

/**
 * @brief Runs `model` in eval mode without gradients over this rank's share of `split`
 * (data::EvalLoader: every sample exactly once across ranks) and returns its statistics, under
 * bf16 autocast when `bf16` (the training's precision on a GPU). On a GPU the statistics
 * accumulate on the device and are read back once, at the end; on a CPU batch by batch. The model
 * is put back in training mode afterwards, also when this throws. A batch that memory cannot hold
 * is DataError (exit 2) naming its rows, its longest sample and options.batch_remedy. With
 * `predictions`, every batch's logits are also kept there (copied to the host batch by batch).
 */
EvalStats evaluate_shard(model::ClassifierImpl& model, const data::DatasetInfo& info,
                         const std::string& split, int rank, int world_size,
                         const ShardOptions& options, ShardPredictions* predictions = nullptr);

/** @brief The same with the default options but for the batch and bf16. */
inline EvalStats evaluate_shard(model::ClassifierImpl& model, const data::DatasetInfo& info,
                                const std::string& split, int rank, int world_size,
                                std::int64_t batch_size, bool bf16 = false,
                                ShardPredictions* predictions = nullptr) {
  ShardOptions options;
  options.batch_size = batch_size;
  options.bf16 = bf16;
  return evaluate_shard(model, info, split, rank, world_size, options, predictions);
}

}  // namespace slimtrain::eval
