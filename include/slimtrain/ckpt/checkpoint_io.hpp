#pragma once
/**
 * @brief Synchronous checkpoint write and read. The write protocol, each step fsynced:
 *   1. everything goes into checkpoints/.tmp-step-NNNNNNNN-<pid>/ (tensors.bin, blobs, state.json),
 *   2. manifest.json (size and XXH3-64 of every file) is written last, then the directory fsynced,
 *   3. the directory is renamed to step-NNNNNNNN and checkpoints/ fsynced,
 *   4. `latest` is replaced through a temporary file and rename, and checkpoints/ fsynced again.
 * A crash at any point leaves the previous checkpoint and `latest` loadable; a failure removes the
 * temporary directory and throws an Error naming the file and the reason.
 */
#include <functional>
#include <optional>
#include <string>

#include "slimtrain/ckpt/checkpoint_state.hpp"
#include "slimtrain/ckpt/verify.hpp"

namespace slimtrain::ckpt {

/**
 * @brief Writes `state` as checkpoints_dir/step-NNNNNNNN and points `latest` at it; returns the
 * path. `metric` is stored for retention. Stale .tmp-* directories are removed first. An existing
 * directory of the same step (an earlier run's) is moved aside by rename and replaced; the trainer
 * itself never writes a step twice.
 */
std::string write_checkpoint(const std::string& checkpoints_dir, const CheckpointState& state,
                             std::optional<double> metric = std::nullopt);

/** @brief Which tensors a read leaves in the file (a rank of --shard parameters reads only its
 * own elements of the weights). */
using DeferTensor = std::function<bool(const std::string& name)>;

/** @brief Verifies, then reads a checkpoint; DataError naming the file when it does not verify.
 * Tensors `defer` names are not read: their entries are `deferred`, of their shape and dtype
 * without memory. */
CheckpointState read_checkpoint(const std::string& checkpoint_dir,
                                VerifyDepth depth = VerifyDepth::checksums,
                                const DeferTensor& defer = {});

/** @brief Elements [from, from + count) of a deferred `entry` of `state`, row-major, [count]:
 * only their bytes are read. */
torch::Tensor read_elements(const CheckpointState& state, const TensorEntry& entry,
                            std::int64_t from, std::int64_t count);

/** @brief The directory `latest` names (absolute path), or nullopt when there is none. */
std::optional<std::string> read_latest_pointer(const std::string& checkpoints_dir);

}  // namespace slimtrain::ckpt
