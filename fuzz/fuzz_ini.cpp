// libFuzzer target: the INI file of `slimtrain train --config`, read with the real option table
// and every value's check (cli/train_options.hpp). The fuzzer's bytes are the file.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "slimtrain/cli/train_options.hpp"
#include "slimtrain/core/error.hpp"

namespace {
const std::string& config_path() {
  static const std::string path = (slimtrain::fuzz::scratch_dir() / "train.ini").string();
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
