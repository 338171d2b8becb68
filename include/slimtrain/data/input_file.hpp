#pragma once
/** @brief Reading a whole input file into memory, gunzipping it transparently (zlib). */
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::data {

/**
 * @brief The bytes of `path`, decompressed when it is gzip. Throws DataError naming the file
 * when it cannot be opened or its gzip stream is corrupt or truncated.
 */
std::vector<std::uint8_t> read_input_file(const std::string& path);

}  // namespace slimtrain::data
