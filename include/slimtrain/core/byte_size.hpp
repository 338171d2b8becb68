#pragma once
/**
 * @brief A size as people write it on a command line: "5GB", "500MB", "2GiB", "1500000": what
 * save_pretrained's max_shard_size takes (decimal units, 5GB = 5 * 10^9 bytes; binary ones with
 * "iB"), for `export --hf --max-shard-size`.
 */
#include <cstdint>
#include <string>

namespace slimtrain {

/** @brief The bytes `text` says; ConfigError naming `option` and the forms it takes otherwise. */
std::uint64_t parse_byte_size(const std::string& text, const std::string& option);

}  // namespace slimtrain
