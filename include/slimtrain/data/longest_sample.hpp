#pragma once
/** @brief The longest token sequence of a split, from its offsets alone: what the memory plan
 * (train/memory_plan.hpp) sizes activations by before any sample is read. */
#include <cstdint>
#include <string>

#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::data {

/**
 * @brief Elements of the longest sample of split `split` in the file's first ragged input of
 * tokens (row_size 1), cut at info.max_length when set; 0 when the file has no such input.
 * DataError naming the file and dataset when the offsets cannot be read.
 */
std::int64_t longest_sample(const DatasetInfo& info, const std::string& split);

}  // namespace slimtrain::data
