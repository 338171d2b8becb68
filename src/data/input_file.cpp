#include "slimtrain/data/input_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {

InputBytes::InputBytes(std::vector<std::uint8_t> bytes) {
  auto owned = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes));
  data_ = owned->data();
  size_ = owned->size();
  owner_ = std::move(owned);
}

InputBytes InputBytes::map(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) SLIMTRAIN_THROW(DataError, path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    SLIMTRAIN_THROW(DataError, path, ": cannot read: ", std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    SLIMTRAIN_THROW(DataError, path, " is a directory, not a file");
  }
  InputBytes out;
  out.size_ = static_cast<std::size_t>(st.st_size);
  if (out.size_ == 0) {
    ::close(fd);
    return out;
  }
  void* mapped = ::mmap(nullptr, out.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  if (mapped == MAP_FAILED) SLIMTRAIN_THROW(DataError, path, ": cannot map: ", std::strerror(err));
  const std::size_t size = out.size_;
  out.owner_ = std::shared_ptr<const void>(
      mapped, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  out.data_ = static_cast<const std::uint8_t*>(mapped);
  return out;
}

bool is_gzip(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) SLIMTRAIN_THROW(DataError, path, ": cannot open: ", std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  const ssize_t got = ::read(fd, magic, 2);
  ::close(fd);
  return got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

InputBytes open_input(const std::string& path) {
  return is_gzip(path) ? InputBytes(read_input_file(path)) : InputBytes::map(path);
}

std::vector<std::uint8_t> read_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    SLIMTRAIN_THROW(DataError, path, " is a directory, not a file");
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
