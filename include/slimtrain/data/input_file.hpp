#pragma once
/**
 * @brief Input files as bytes: a raw file is mapped (so a rank that converts a slice of the
 * records reads only the pages of that slice), a gzip file is decompressed into memory (zlib).
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace slimtrain::data {

/** @brief Read-only bytes owned by a buffer or a file mapping. */
class InputBytes {
 public:
  InputBytes() = default;
  /** @brief Owns `bytes` (tests, fuzzing, decompressed input). */
  InputBytes(std::vector<std::uint8_t> bytes);  // NOLINT: a buffer is an input
  /** @brief Maps `path` read-only; DataError naming it when it cannot be opened. */
  static InputBytes map(const std::string& path);

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::shared_ptr<const void> owner_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

/** @brief Whether `path` starts with the gzip magic; DataError naming it when unreadable. */
bool is_gzip(const std::string& path);

/**
 * @brief The bytes of `path`, decompressed when it is gzip. Throws DataError naming the file
 * when it cannot be opened or its gzip stream is corrupt or truncated.
 */
std::vector<std::uint8_t> read_input_file(const std::string& path);

/** @brief A raw file mapped, a gzip file read_input_file'd. */
InputBytes open_input(const std::string& path);

}  // namespace slimtrain::data
