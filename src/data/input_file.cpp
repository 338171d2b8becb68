#include "slimtrain/data/input_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {

std::vector<std::uint8_t> read_input_file(const std::string& path) {
  errno = 0;
  // gzread passes non-gzip files through unchanged, so one path serves raw and .gz inputs.
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) {
    SLIMTRAIN_THROW(DataError, path,
                    ": cannot open: ", errno ? std::strerror(errno) : "out of memory");
  }
  gzbuffer(file.get(), 1 << 18);
  std::vector<std::uint8_t> bytes;
  std::size_t used = 0;
  for (;;) {
    if (bytes.size() - used < (1u << 20))
      bytes.resize(std::max<std::size_t>(2 * bytes.size(), used + (4u << 20)));
    int got = gzread(file.get(), bytes.data() + used, static_cast<unsigned>(bytes.size() - used));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file.get(), &code);
      SLIMTRAIN_THROW(DataError, path,
                      ": cannot read: ", code == Z_ERRNO ? std::strerror(errno) : message);
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  int code = 0;
  const char* message = gzerror(file.get(), &code);
  if (code != Z_OK) {
    SLIMTRAIN_THROW(DataError, path, ": corrupt or truncated gzip stream: ", message);
  }
  bytes.resize(used);
  bytes.shrink_to_fit();
  return bytes;
}

}  // namespace slimtrain::data
