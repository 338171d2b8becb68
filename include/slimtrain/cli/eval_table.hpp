#pragma once
/**
 * @brief `slimtrain eval`'s table: the summary, each class's precision, recall, F1 and support,
 * and above the confusion limit the most frequent confusions. With many classes the table shows
 * the kTableEnds classes of lowest F1 and the kTableEnds of highest (--per-class all: every
 * class), so 5,000 classes are a screen, not 5,000 lines.
 */
#include <cstddef>
#include <string>

#include "slimtrain/eval/metrics.hpp"

namespace slimtrain::cli {

/** @brief Classes shown at each end of a cut table. */
inline constexpr std::size_t kTableEnds = 20;

/** @brief The per-class lines (and a note where the table is cut), then the top confusions. */
std::string per_class_table(const eval::Metrics& m, bool all_classes);

}  // namespace slimtrain::cli
