#pragma once
// The fuzz targets whose code under test reads files write each input into a directory of their
// own process, on tmpfs where there is one, removed when the fuzzer exits.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace slimtrain::fuzz {

inline const std::filesystem::path& scratch_dir() {
  namespace fs = std::filesystem;
  static const fs::path dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const fs::path made = base / ("slimtrain-fuzz-" + std::to_string(getpid()));
    fs::create_directories(made);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_dir(), ec);
    });
    return made;
  }();
  return dir;
}

}  // namespace slimtrain::fuzz
