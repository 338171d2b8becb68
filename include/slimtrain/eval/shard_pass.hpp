#pragma once
/** @brief The local half of an evaluation: this rank's exact share, no communication. */
#include <cstdint>
#include <string>

#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/metrics.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

/**
 * @brief Runs `model` in eval mode without gradients over this rank's share of `split`
 * (data::EvalLoader: every sample exactly once across ranks) and returns its statistics.
 * The model is put back in training mode afterwards, also when this throws.
 */
EvalStats evaluate_shard(model::ClassifierImpl& model, const data::DatasetInfo& info,
                         const std::string& split, int rank, int world_size,
                         std::int64_t batch_size);

}  // namespace slimtrain::eval
