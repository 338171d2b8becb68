#pragma once
/**
 * @brief The classes of a text file's labels, as people write them: every label is a class name,
 * integers included (AG News' 1-4 are four classes, not five; -2..2 are five). Without
 * --class-names or --num-classes the classes are the labels present in any split, integers in
 * numeric order (negative ones first), names (or a mix) in text order. --class-names fixes the
 * set and its order (each label must be one of the names, as written); --num-classes N fixes the
 * classes as the integers 0..N-1 (each label must be one of them: a file whose classes some split
 * lacks, or that numbers them from 0 on purpose).
 */
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/comm/control_plane.hpp"

namespace slimtrain::cli {

/** @brief One split's labels as written, where each came from (for messages), and their classes. */
struct SplitLabels {
  const std::vector<std::string>* labels = nullptr;
  /** @brief "train.csv: line 7" for the i-th label. */
  std::function<std::string(std::size_t)> where;
  std::vector<std::int64_t> y;  ///< filled: each label's class index
};

/**
 * @brief Collective: the class names in index order, every split's y filled, options.class_names
 * and num_classes set. DataError naming the record of a label outside --class-names or
 * --num-classes.
 */
std::vector<std::string> resolve_text_labels(comm::ControlPlane& control,
                                             std::vector<SplitLabels>& splits, PrepOptions& options,
                                             std::int64_t& num_classes);

}  // namespace slimtrain::cli
