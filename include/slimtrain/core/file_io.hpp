#pragma once
/**
 * @brief POSIX file helpers for durable checkpoint writes. Every failure names the file and the
 * system's reason (strerror), because "write failed" is useless on a full scratch filesystem.
 */
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace slimtrain::files {

/** @brief An owned file descriptor, closed on destruction. */
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  /** @brief Closes now and throws if close reports an error (it can carry a late write error). */
  void close_checked(const std::string& path);

 private:
  int fd_ = -1;
};

/** @brief Opens `path` read-only; throws DataError naming the file and the reason. */
FileDescriptor open_for_reading(const std::string& path);

/**
 * @brief A new file written front to back; its size and XXH3-64 checksum accumulate as bytes go
 * out, so the manifest needs no second pass over the data.
 */
class DurableFile {
 public:
  /** @brief Creates `path` (it must not exist); throws Error naming it on failure. */
  explicit DurableFile(std::string path);
  ~DurableFile();
  DurableFile(const DurableFile&) = delete;
  DurableFile& operator=(const DurableFile&) = delete;

  void write(const void* data, std::size_t size);
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  /** @brief fsync, then close; both checked. */
  void commit();

  std::uint64_t size() const { return size_; }
  std::uint64_t checksum() const;
  const std::string& path() const { return path_; }

 private:
  struct HashState;
  std::string path_;
  FileDescriptor fd_;
  std::unique_ptr<HashState> hash_;
  std::uint64_t size_ = 0;
};

/** @brief Size and XXH3-64 of a whole file. */
struct FileDigest {
  std::uint64_t size = 0;
  std::uint64_t checksum = 0;
};

/** @brief Reads `path` through once; throws DataError naming it when it cannot be read. */
FileDigest digest_file(const std::string& path);
/** @brief The whole file as bytes; throws DataError naming it. */
std::string read_whole_file(const std::string& path);
/** @brief Reads exactly `size` bytes at `offset`; a short read is a DataError naming the file. */
void read_exact_at(int fd, const std::string& path, void* out, std::size_t size,
                   std::uint64_t offset);

/** @brief Flushes a directory's entries (new names, renames) to disk. */
void fsync_directory(const std::string& path);
/** @brief fsync of an existing file's data (one written by another library, HDF5 say). */
void fsync_file(const std::string& path);
/** @brief mkdir -p; throws Error naming the directory. */
void make_directories(const std::string& path);
/** @brief rename(2), checked; both names in the error. */
void rename_checked(const std::string& from, const std::string& to);
/** @brief rm -rf that never throws (used on error paths); returns false if something remained. */
bool remove_tree(const std::string& path) noexcept;

/**
 * @brief Before any work: ConfigError naming `option` unless `output` can be written as a file:
 * not a directory, not an existing file without `force`, its directory there and a file creatable
 * in it (tried: a read-only file system or a folder without permission is found now).
 */
void check_output_file(const std::string& output, bool force, const std::string& option);
/** @brief The same for a directory written into: not a file, and itself (when it exists) or the
 * nearest directory above it that exists takes a new file. Makes nothing. */
void check_output_directory(const std::string& dir, const std::string& option);

/**
 * @brief Makes `output` appear whole or not at all: `write` fills a temporary file beside it,
 * which is fsynced and renamed over `output`; on any error the temporary is removed and the
 * error rethrown. Refuses an existing `output` unless `force` (ConfigError naming `option`).
 */
void write_file_atomically(const std::string& output, bool force, const std::string& option,
                           const std::function<void(const std::string& tmp_path)>& write);
/** @brief 16 lowercase hex digits. */
std::string hex64(std::uint64_t value);

}  // namespace slimtrain::files
