#pragma once
/**
 * @brief A ragged input as `prep text` writes it (layout 2: NAME/values and NAME/offsets), from the
 * samples each rank prepared: where each rank's values go, and the collective write.
 */
#include <hdf5.h>

#include <cstdint>
#include <vector>

#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/hdf5_handle.hpp"
#include "slimtrain/data/shard.hpp"

namespace slimtrain::cli {

/** @brief This rank's values of one ragged input, one length per sample, and where they go. */
template <class T>
struct RaggedValues {
  std::vector<T> values;              ///< this rank's samples', end to end
  std::vector<std::int64_t> lengths;  ///< one per kept sample
  data::Range mine{0, 0};             ///< this rank's values in the file's
  std::int64_t total = 0;             ///< every rank's
  /** @brief Drops what was added after `values_before` / `lengths_before` (a skipped record). */
  void truncate(std::size_t values_before, std::size_t lengths_before) {
    values.resize(values_before);
    lengths.resize(lengths_before);
  }
};

/**
 * @brief For each of `counts` (this rank's sample rows, then one count per ragged input): this
 * rank's range in the file's and every rank's total (one all-gather of every count).
 */
void place_counts(comm::ControlPlane& control, const std::vector<std::int64_t>& counts,
                  std::vector<data::Range>& mine, std::vector<std::int64_t>& totals);

/**
 * @brief NAME/values (`file_type`, this rank's `values` of `element` bytes in `memory_type` at
 * `values_at`, `total_values` in all) and NAME/offsets ([total_rows + 1]: this rank's samples
 * `rows_at` on, `lengths` of them) under `inputs`; collective.
 */
data::Hid write_ragged(hid_t inputs, const char* name, hid_t file_type, hid_t memory_type,
                       std::size_t element, const void* values, const data::Range& values_at,
                       std::int64_t total_values, const std::vector<std::int64_t>& lengths,
                       const data::Range& rows_at, std::int64_t total_rows, const RowWriter& rows,
                       bool first_rank);

}  // namespace slimtrain::cli
