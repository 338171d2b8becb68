#pragma once
/** @brief The report of `slimtrain inspect FILE.h5`, and the deep check behind --validate. */
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::data {

/** @brief Counts of each label in /<split>/y; DataError naming the row of a label out of range. */
std::vector<std::int64_t> label_histogram(const DatasetInfo& info, const std::string& split);

/** @brief Classes inspect lists by name (and in label counts) before "... (N more)". */
inline constexpr std::size_t kInspectClassesShown = 30;

/** @brief " ham=200 spam=100": the label counts, the first kInspectClassesShown classes. */
std::string label_counts(const DatasetInfo& info, const std::vector<std::int64_t>& histogram);

/** @brief "2 (ham, spam)": the class count and the first kInspectClassesShown names. */
std::string class_list(const DatasetInfo& info);

/**
 * @brief Prints splits, shapes, dtypes, chunking, classes, label histograms and mean/std. With
 * `validate`, also scans float features for NaN/Inf. Throws DataError on the first problem.
 */
void inspect_dataset(const std::string& path, bool validate, std::ostream& out);

/**
 * @brief The part of inspect_dataset for a layout-2 file: each input's dtype and shape, or its
 * length histogram (min, median, p99, max); with `validate`, offsets (from 0, never decreasing,
 * ending at the values' length) and token ids against vocab_size, DataError naming the row.
 */
void inspect_named(const DatasetInfo& info, bool validate, std::ostream& out);

}  // namespace slimtrain::data
