#include "slimtrain/core/file_io.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace slimtrain::files {
namespace fs = std::filesystem;

namespace {
std::string reason(int err) {
  return std::strerror(err);
}
}  // namespace

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void FileDescriptor::close_checked(const std::string& path) {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) SLIMTRAIN_THROW(Error, "closing ", path, " failed: ", reason(errno));
}

FileDescriptor open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) SLIMTRAIN_THROW(DataError, path, ": cannot open: ", reason(errno));
  return FileDescriptor(fd);
}

struct DurableFile::HashState {
  XXH3_state_t* state = XXH3_createState();
  ~HashState() { XXH3_freeState(state); }
};

DurableFile::DurableFile(std::string path) : path_(std::move(path)), hash_(new HashState) {
  if (!hash_->state || XXH3_64bits_reset(hash_->state) != XXH_OK)
    SLIMTRAIN_THROW(Error, path_, ": cannot initialise the xxHash state");
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) SLIMTRAIN_THROW(Error, "cannot create ", path_, ": ", reason(errno));
  fd_ = FileDescriptor(fd);
}

DurableFile::~DurableFile() = default;

void DurableFile::write(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd_.get(), bytes + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      SLIMTRAIN_THROW(Error, "writing ", path_, " failed after ", size_ + done,
                      " bytes: ", reason(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  XXH3_64bits_update(hash_->state, data, size);
  size_ += size;
}

void DurableFile::commit() {
  if (::fsync(fd_.get()) != 0)
    SLIMTRAIN_THROW(Error, "fsync of ", path_, " failed: ", reason(errno));
  fd_.close_checked(path_);
}

std::uint64_t DurableFile::checksum() const {
  return XXH3_64bits_digest(hash_->state);
}

FileDigest digest_file(const std::string& path) {
  FileDescriptor fd = open_for_reading(path);
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                        XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::vector<char> buffer(1 << 20);
  FileDigest digest;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      SLIMTRAIN_THROW(DataError, path, ": read failed: ", reason(errno));
    }
    if (n == 0) break;
    XXH3_64bits_update(state.get(), buffer.data(), static_cast<std::size_t>(n));
    digest.size += static_cast<std::uint64_t>(n);
  }
  digest.checksum = XXH3_64bits_digest(state.get());
  return digest;
}

std::string read_whole_file(const std::string& path) {
  FileDescriptor fd = open_for_reading(path);
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      SLIMTRAIN_THROW(DataError, path, ": read failed: ", reason(errno));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return bytes;
}

void read_exact_at(int fd, const std::string& path, void* out, std::size_t size,
                   std::uint64_t offset) {
  auto* bytes = static_cast<char*>(out);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, bytes + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      SLIMTRAIN_THROW(DataError, path, ": read at offset ", offset + done,
                      " failed: ", reason(errno));
    }
    if (n == 0)
      SLIMTRAIN_THROW(DataError, path, ": file ends at ", offset + done, " bytes, expected ",
                      size - done, " more (truncated)");
    done += static_cast<std::size_t>(n);
  }
}

void fsync_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    SLIMTRAIN_THROW(Error, "cannot open directory ", path, " to fsync it: ", reason(errno));
  FileDescriptor owned(fd);
  if (::fsync(fd) != 0)
    SLIMTRAIN_THROW(Error, "fsync of directory ", path, " failed: ", reason(errno));
  owned.close_checked(path);
}

void fsync_file(const std::string& path) {
  FileDescriptor owned = open_for_reading(path);
  if (::fsync(owned.get()) != 0)
    SLIMTRAIN_THROW(Error, "fsync of ", path, " failed: ", reason(errno));
  owned.close_checked(path);
}

void make_directories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) SLIMTRAIN_THROW(Error, "cannot create directory ", path, ": ", ec.message());
  if (!fs::is_directory(path, ec))
    SLIMTRAIN_THROW(Error, "cannot create directory ", path, ": a non-directory is in the way");
}

void rename_checked(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    SLIMTRAIN_THROW(Error, "renaming ", from, " to ", to, " failed: ", reason(errno));
}

namespace {
int remove_visited(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path) == 0 || errno == ENOENT ? 0 : -1;
}
}  // namespace

// Not std::filesystem::remove_all: a pip LibTorch 2.x's libtorch.so exports its own statically
// linked copy (pytorch/pytorch#133437), the binary binds to it, and on LibTorch 2.11 it calls
// address 0 (seen in the checkpoint writer on an H200, --device cpu and cuda alike).
bool remove_tree(const std::string& path) noexcept {
  // Children before their directory; symbolic links (the path itself too) removed, never
  // followed; a file alone is visited alone.
  ::nftw(path.c_str(), remove_visited, 16, FTW_DEPTH | FTW_PHYS);
  struct stat st;
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

namespace {

// Creates and removes a hidden file in `dir`: what writing there will need, tried before any
// work (a read-only file system, a folder without write permission, /proc).
void probe_creatable(const std::string& dir, const std::string& what, const std::string& option) {
  const std::string probe = dir + "/.slimtrain-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    SLIMTRAIN_THROW(ConfigError, option, ": cannot write ", what, " (nothing can be created in ",
                    dir, ": ", std::strerror(errno), ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void check_output_file(const std::string& output, bool force, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (output.empty()) SLIMTRAIN_THROW(ConfigError, option, ": an empty path");
  if (fs::is_directory(output, ec))
    SLIMTRAIN_THROW(ConfigError, option, ": ", output, " is a directory; name the file to write (",
                    option, " ", (fs::path(output) / "out.h5").string(), ", say)");
  if (fs::exists(output, ec) && !force)
    SLIMTRAIN_THROW(ConfigError, option, ": ", output,
                    " already exists; pass --force to replace it");
  const fs::path parent = fs::absolute(output).parent_path();
  if (!fs::is_directory(parent, ec))
    SLIMTRAIN_THROW(ConfigError, option, ": ", output, ": its directory ", parent.string(),
                    fs::exists(parent, ec) ? " is a file" : " does not exist");
  probe_creatable(parent.string(), output, option);
}

void check_output_directory(const std::string& dir, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (dir.empty()) SLIMTRAIN_THROW(ConfigError, option, ": an empty path");
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    SLIMTRAIN_THROW(ConfigError, option, ": ", dir, " is a file; name a directory to write into");
  // Nothing is made here (a run that fails on its options leaves no directory behind): the
  // nearest directory that exists must take what will be made in it.
  fs::path existing = fs::absolute(dir);
  while (!fs::exists(existing, ec) && existing.has_parent_path() &&
         existing.parent_path() != existing)
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    SLIMTRAIN_THROW(ConfigError, option, ": cannot create the directory ", dir, ": ",
                    existing.string(), " is a file");
  probe_creatable(existing.string(), dir, option);
}

void write_file_atomically(const std::string& output, bool force, const std::string& option,
                           const std::function<void(const std::string& tmp_path)>& write) {
  namespace fs = std::filesystem;
  check_output_file(output, force, option);
  const fs::path parent = fs::absolute(output).parent_path();
  // A hidden name beside the output: same filesystem, so the rename is atomic.
  const fs::path out(output);
  const std::string tmp =
      (parent / ("." + out.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
  try {
    write(tmp);
    FileDescriptor fd(::open(tmp.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid() || ::fsync(fd.get()) != 0)
      SLIMTRAIN_THROW(Error, "fsync of ", tmp, " failed: ", std::strerror(errno));
    fd.close_checked(tmp);
    rename_checked(tmp, output);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  fsync_directory(parent.string());
}

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace slimtrain::files
