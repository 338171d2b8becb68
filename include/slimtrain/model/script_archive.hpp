#pragma once
/**
 * @brief What a TorchScript file says about itself before LibTorch reads it: the file format
 * version in its `<archive>/version` record, so a module saved by a newer PyTorch than the linked
 * LibTorch is named as that, not as "not a TorchScript module".
 */
#include <cstdint>
#include <optional>
#include <string>

namespace slimtrain::model {

/**
 * @brief The file format version a TorchScript archive (a zip whose records sit under one
 * folder) declares; nullopt when `path` is not such an archive. Reads the zip's central directory
 * and that one record, never the tensors.
 */
std::optional<std::uint64_t> script_format_version(const std::string& path);

/**
 * @brief The error for a TorchScript file LibTorch failed to load with `problem`: a newer file
 * format than this LibTorch reads, an archive it cannot read (an operator or type it does not
 * know, as in a module saved by a newer PyTorch), or a file that is no TorchScript archive at all.
 * Each names the file, the versions and what to do.
 */
[[noreturn]] void throw_unloadable(const std::string& path, const std::string& problem);

}  // namespace slimtrain::model
