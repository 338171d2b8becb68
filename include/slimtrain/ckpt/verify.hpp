#pragma once
/**
 * @brief Checkpoint verification without loading tensors: manifest present, self-consistent and of
 * this format; every listed file present with the recorded size and XXH3-64 checksum; the tensor
 * index inside tensors.bin; state.json agreeing with the directory's step.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::ckpt {

/** @brief Outcome of verifying one checkpoint directory; `problem` names the file and why. */
struct VerifyReport {
  bool ok = false;
  std::string problem;
  std::string path;
};

/** @brief One file listed in the manifest and what verification found. */
struct FileCheck {
  std::string name;
  std::uint64_t expected_size = 0;
  std::uint64_t actual_size = 0;
  std::string expected_checksum;
  std::string actual_checksum;
  std::string status;  ///< "ok", "missing", "size mismatch", "checksum mismatch", "unreadable"
};

/** @brief Full verification result, for `slimtrain inspect`. */
struct VerifyDetail {
  VerifyReport report;
  nlohmann::json manifest;  ///< null when manifest.json is missing or unreadable
  nlohmann::json state;     ///< contents of state.json, null when not readable
  std::vector<FileCheck> files;
};

/**
 * @brief How deep verification reads: checksums hashes every file (what resume, inspect and
 * retention trust); sizes checks the manifest and every file's size only, for ranks that load a
 * checkpoint another rank has just verified in full (one rank hashes, not all of them).
 */
enum class VerifyDepth { checksums, sizes };

VerifyDetail verify_checkpoint(const std::string& checkpoint_dir,
                               VerifyDepth depth = VerifyDepth::checksums);

/** @brief The manifest's own checksum: XXH3-64 of the manifest dumped without "manifest_xxh3". */
std::string manifest_self_checksum(const nlohmann::json& manifest);

}  // namespace slimtrain::ckpt
