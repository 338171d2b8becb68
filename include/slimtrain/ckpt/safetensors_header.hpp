#pragma once
/**
 * @brief The header of a safetensors file, HuggingFace's weight format, read and checked without
 * LibTorch (so that a fuzz target reaches it). The file: an 8-byte little-endian length N, N bytes
 * of JSON (name -> {"dtype", "shape", "data_offsets": [begin, end]}, and an optional
 * "__metadata__" of strings to strings), then the tensors' bytes, little-endian and contiguous,
 * offsets counted from the end of the header.
 *
 * Checked as the reference implementation (huggingface/safetensors) checks it, and refused with a
 * DataError naming the file and the tensor otherwise: N at most 100,000,000 and inside the file;
 * the JSON an object, its values known dtypes with non-negative shapes; offsets contiguous from 0
 * with no hole or overlap, each tensor's bytes its shape times its dtype's size (no overflow), the
 * last ending at the end of the file. Beyond the reference: a name given twice is refused (its
 * JSON reader keeps the last silently).
 */
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace slimtrain::ckpt {

/** @brief Largest header the reference accepts. */
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

/** @brief One tensor's entry of the header. */
struct SafetensorsEntry {
  std::string name;
  std::string dtype;                 ///< "F32", "BF16", ... as in the file
  std::vector<std::int64_t> shape;   ///< [] for a scalar
  std::uint64_t begin = 0, end = 0;  ///< byte offsets in the data area
  std::int64_t numel() const;
};

struct SafetensorsHeader {
  std::uint64_t header_bytes = 0;         ///< N
  std::vector<SafetensorsEntry> tensors;  ///< in the order of their offsets
  std::map<std::string, std::string> metadata;
  /** @brief Where the data area starts in the file: 8 + N. */
  std::uint64_t data_start() const { return 8 + header_bytes; }
  /** @brief The entry of `name`, or null. */
  const SafetensorsEntry* find(const std::string& name) const;
};

/** @brief Bits of one element of a safetensors dtype ("F32" -> 32, "F4" -> 4); 0 for an unknown
 * name. */
std::size_t safetensors_dtype_bits(const std::string& dtype);

/**
 * @brief Parses and checks a header. `bytes` holds the file's first `size` bytes (the 8-byte
 * length and at least the header it announces, else the header is past the end); `file_size` is
 * the whole file's. `where` names the file in errors.
 */
SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size,
                                           std::uint64_t file_size, const std::string& where);

/** @brief Reads and checks the header of the file at `path` (DataError naming it). */
SafetensorsHeader read_safetensors_header(const std::string& path);

}  // namespace slimtrain::ckpt
