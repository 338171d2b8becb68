#pragma once
/**
 * @brief What a rank's training state weighs and what it costs in resident memory: the done
 * event's `memory` (bench/memory reads it). The peak counts from the start of training
 * (runtime::reset_peak_resident), after start-up's one-off buffers were handed back.
 */
#include <nlohmann/json.hpp>

#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

/**
 * @brief Bytes of weights, gradients (the buckets) and optimizer state counted from the tensors,
 * the training split the loader holds, and the resident memory before the model existed and at
 * its peak, in training and in start-up (where a resume loads its checkpoint). Taken at the end
 * of the loop, before the final checkpoint's host copy.
 */
nlohmann::json memory_report(const Session& s);

/**
 * @brief Adds to `memory` the peak above the baseline once the final checkpoint is written
 * (its host copies, its files): "checkpoint_peak_above_baseline_bytes".
 */
void add_checkpoint_peak(nlohmann::json& memory, const Session& s);

}  // namespace slimtrain::train
