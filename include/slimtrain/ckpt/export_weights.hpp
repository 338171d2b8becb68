#pragma once
/** @brief `slimtrain export --checkpoint P -o weights.h5`: a checkpoint's weights as plain HDF5. */
#include <string>

namespace slimtrain::ckpt {

/**
 * @brief Writes every "model/<name>" tensor of a checkpoint as dataset "/<name>" (dots kept;
 * float32/float64 as stored, float16/bfloat16 widened to float32, integers as stored, bool as
 * uint8) with root attributes "model_spec" (JSON) and "step". `checkpoint` is a step directory or
 * a run directory (then its newest checkpoint that verifies). The file appears atomically (temp +
 * rename). An existing `output` without `force` is a ConfigError; a checkpoint that does not
 * verify is a DataError naming the file. Returns the checkpoint directory used.
 */
std::string export_weights(const std::string& checkpoint, const std::string& output, bool force);

}  // namespace slimtrain::ckpt
