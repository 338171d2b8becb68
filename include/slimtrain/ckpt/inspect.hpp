#pragma once
/** @brief `slimtrain inspect CHECKPOINT`: describe and verify one checkpoint (no LibTorch here). */
#include <string>

namespace slimtrain::ckpt {

/**
 * @brief Prints step, epoch, a meta summary, tensor count and bytes, blobs, and every file with its
 * checksum status, then "verified" or the problem. `path` is a step directory, or a run or
 * checkpoints directory (then the checkpoint `latest` names). Returns 0 when the checkpoint
 * verifies, 2 otherwise (the problem, naming the file, also goes to stderr).
 */
int inspect_checkpoint(const std::string& path, bool json);

/** @brief True when `path` looks like a checkpoint, a checkpoints directory or a run directory. */
bool is_checkpoint_path(const std::string& path);

}  // namespace slimtrain::ckpt
