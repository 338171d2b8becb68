#pragma once
/**
 * @brief A batch memory cannot hold: one record of 50 MB makes a 9-million-token sample, and
 * padding a batch to it asks for gigabytes. LibTorch says so with an allocator's message and a
 * stack; the user needs the sample, its length and the option that fixes it.
 */
#include <cstdint>
#include <exception>
#include <string>

#include "slimtrain/data/batch.hpp"

namespace slimtrain::data {

/** @brief Whether `e` is an allocation failure (std::bad_alloc, LibTorch's CPU or CUDA one). */
bool is_allocation_failure(const std::exception& e);

/** @brief What a training batch too large for memory is told to do. */
inline constexpr const char* kTrainBatchRemedy =
    "train with --max-length or a smaller --batch-size";

/**
 * @brief Throws DataError (exit 2): `what` ("step 3's batch", "a batch") of `samples` samples
 * of split `split` did not fit in memory, naming its longest sample (source row and length) when
 * it is known (longest_row >= 0), and `remedy`, the options that fix it ("train with --max-length
 * or a smaller --batch-size"; an evaluation's names its own batch option).
 */
[[noreturn]] void refuse_batch(const std::string& what, std::int64_t samples,
                               std::int64_t longest_row, std::int64_t longest_length,
                               const std::string& split, const std::exception& e,
                               const std::string& remedy = kTrainBatchRemedy);

}  // namespace slimtrain::data
