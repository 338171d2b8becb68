#pragma once
/**
 * @brief Files of one checkpoint written by every rank in parallel (a sharded run's optimizer
 * shards), alongside rank 0's write of the rest.
 *
 * Each rank writes its file into checkpoints/.shards-step-NNNNNNNN/ as NAME.part, fsyncs it,
 * writes NAME.sum (its size and XXH3-64) and renames NAME.part to NAME: a NAME that exists is
 * complete. Rank 0's writer waits for every expected NAME under the I/O deadline, moves them into
 * its temporary checkpoint directory before the manifest (which lists them like any other file)
 * and removes the staging directory after the commit. A rank that dies mid-write leaves only the
 * staging directory, never a checkpoint that lacks its shard; the next write removes it. The
 * directory must be on a file system every rank sees, as --resume already needs.
 */
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::files {
class DurableFile;
}

namespace slimtrain::ckpt {

/** @brief checkpoints/.shards-step-NNNNNNNN */
std::string staging_dir(const std::string& checkpoints_dir, std::int64_t step);

/**
 * @brief Writes staging_dir/name with `write` (durable, then renamed): complete when it appears.
 */
void stage_rank_file(const std::string& checkpoints_dir, std::int64_t step, const std::string& name,
                     const std::function<void(files::DurableFile&)>& write);

/**
 * @brief Rank 0's writer: waits up to `timeout_s` for every name in staging, moves each into
 * `into` and returns its manifest records ({name, size, xxh3}). Error naming the missing files.
 */
std::vector<nlohmann::json> collect_rank_files(const std::string& checkpoints_dir,
                                               std::int64_t step,
                                               const std::vector<std::string>& names,
                                               const std::string& into, double timeout_s);

/** @brief Removes staging directories of steps other than `keep` (-1: all). */
void remove_staging(const std::string& checkpoints_dir, std::int64_t keep);

}  // namespace slimtrain::ckpt
