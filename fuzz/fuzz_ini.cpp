// libFuzzer target: the INI file of `slimtrain train --config`, read with the real option table
// and every value's check (cli/train_options.hpp). The fuzzer's bytes are the file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "slimtrain/cli/train_options.hpp"
#include "slimtrain/core/error.hpp"

namespace {
const std::string& config_path() {
  static const std::string path = [] {
    namespace fs = std::filesystem;
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    static const std::string file =
        (base / ("slimtrain-fuzz-" + std::to_string(getpid()) + ".ini")).string();
    std::atexit([] { std::remove(file.c_str()); });
    return file;
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::ofstream(config_path(), std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  slimtrain::train::TrainConfig config;
  try {
    // --help in the file prints the option table and returns false: also an accepted outcome.
    (void)slimtrain::cli::parse_train_options(
        {"--data", "fuzz.h5", "--out", "fuzz-run", "--config", config_path()}, config);
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
