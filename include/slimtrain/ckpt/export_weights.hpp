#pragma once
/** @brief `slimtrain export --checkpoint P -o weights.h5|.safetensors`: a checkpoint's weights as
 * plain HDF5 or as safetensors. */
#include <string>

namespace slimtrain::ckpt {

/**
 * @brief Writes every "model/<name>" tensor of a checkpoint as dataset "/<name>" (dots kept;
 * float32/float64 as stored, float16/bfloat16 widened to float32, integers as stored, bool as
 * uint8) with root attributes "model_spec" (JSON) and "step". `checkpoint` is a step directory or
 * a run directory (then its newest checkpoint that verifies). The file appears atomically (temp +
 * rename). An existing `output` without `force` is a ConfigError; a checkpoint that does not
 * verify is a DataError naming the file. Returns the checkpoint directory used. An output named
 * *.safetensors is written as safetensors instead: every tensor in its stored dtype, metadata
 * format=pt, model_spec, step and source_checkpoint.
 */
std::string export_weights(const std::string& checkpoint, const std::string& output, bool force);

}  // namespace slimtrain::ckpt
