#pragma once
/**
 * @brief Text and bytes as int64 words: the narrowest element the control plane moves, so
 * hostnames, GPU UUIDs, operation tags and activity names ride in fixed slots of a record.
 */
#include <cstddef>
#include <cstdint>
#include <string>

namespace slimtrain::comm {

/**
 * @brief Copies `bytes` into `n` words, zero-padded; at most n * 8 bytes (n * 8 - 1 when the
 * slot must hold a NUL-terminated text for unpack_text).
 */
void pack_bytes(const std::string& bytes, std::int64_t* words, std::size_t n);

/** @brief pack_bytes of `text` cut to n * 8 - 1 bytes, so the slot always ends in a NUL. */
void pack_text(const std::string& text, std::int64_t* words, std::size_t n);

/** @brief The text of a slot pack_text wrote: its bytes up to the first NUL. */
std::string unpack_text(const std::int64_t* words, std::size_t n);

}  // namespace slimtrain::comm
