#pragma once
/**
 * @brief Names on disk: RUN_DIR/checkpoints/step-NNNNNNNN/{tensors.bin, state.json, blob-*.bin,
 * manifest.json}, RUN_DIR/checkpoints/latest, and the test-only crash injection points.
 */
#include <cstdint>
#include <optional>
#include <string>

namespace slimtrain::ckpt {

inline constexpr const char* kFormatName = "slimtrain-checkpoint";
inline constexpr int kFormatVersion = 1;
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kStateFile = "state.json";
inline constexpr const char* kTensorsFile = "tensors.bin";
inline constexpr const char* kLatestFile = "latest";
/** @brief Exit status of a process stopped by SLIMTRAIN_CKPT_CRASH_AT. */
inline constexpr int kCrashExitCode = 86;

/** @brief RUN_DIR/checkpoints */
std::string checkpoints_dir(const std::string& run_dir);
/** @brief "step-00000100" */
std::string step_dir_name(std::int64_t step);
/** @brief The step of a "step-NNNNNNNN" name (8 or more digits), or nullopt for anything else. */
std::optional<std::int64_t> parse_step_dir_name(const std::string& name);
/** @brief The file a blob is stored in: "blob-<name>.bin"; names are [A-Za-z0-9_.-]+. */
std::string blob_file_name(const std::string& blob_name);
bool valid_blob_name(const std::string& blob_name);

/** @brief Bytes per element of a dtype name used in the manifest ("float32", ...), 0 if unknown. */
std::size_t dtype_size(const std::string& dtype);

/**
 * @brief Test-only crash injection: when SLIMTRAIN_CKPT_CRASH_AT equals `stage`, the process ends
 * at once with std::_Exit(86), as a kill -9 would, without flushing or unwinding. Stages, in write
 * order: after-tmpdir, mid-tensors, after-tensors, after-blobs, after-state, after-manifest,
 * after-rename, after-latest-tmp, after-latest.
 */
void crash_point(const char* stage);

}  // namespace slimtrain::ckpt
