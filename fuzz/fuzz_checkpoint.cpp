// libFuzzer target: a checkpoint directory's manifest and its verification (what resume, inspect
// and retention trust before loading anything). The input is the directory packed as
// fuzz/seeds.sh packs a real one: manifest.json, then the contents of each file the manifest
// lists, in its order, each part after a separator line.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "scratch_dir.hpp"
#include "slimtrain/ckpt/verify.hpp"
#include "slimtrain/core/error.hpp"

namespace {
namespace fs = std::filesystem;
constexpr std::string_view kSeparator = "\n--slimtrain-fuzz-file--\n";
constexpr std::size_t kMaxFiles = 16;

std::vector<std::string_view> split_parts(std::string_view input) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = input.find(kSeparator);
    parts.push_back(input.substr(0, at));
    if (at == std::string_view::npos) return parts;
    input.remove_prefix(at + kSeparator.size());
  }
}

// Named as the checkpoint of step 1, so verification's directory-name check runs too.
const fs::path& checkpoint_dir() {
  static const fs::path dir = slimtrain::fuzz::scratch_dir() / "step-00000001";
  return dir;
}

void write(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string_view> parts =
      split_parts(std::string_view(reinterpret_cast<const char*>(data), size));
  const fs::path& dir = checkpoint_dir();
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir / "manifest.json", parts[0]);
  // The listed files get the following parts; names that would leave the directory are skipped
  // here (verification must still reject them, and does: "bad name").
  const nlohmann::json manifest = nlohmann::json::parse(parts[0], nullptr, false);
  if (manifest.is_object() && manifest.contains("files") && manifest["files"].is_array()) {
    std::size_t part = 1;
    for (const nlohmann::json& f : manifest["files"]) {
      if (part >= parts.size() || part > kMaxFiles) break;
      if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) continue;
      const std::string name = f["name"].get<std::string>();
      if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
          name.find('\0') != std::string::npos || name == "manifest.json")
        continue;
      write(dir / name, parts[part++]);
    }
  }
  for (auto depth :
       {slimtrain::ckpt::VerifyDepth::checksums, slimtrain::ckpt::VerifyDepth::sizes}) {
    try {
      (void)slimtrain::ckpt::verify_checkpoint(dir.string(), depth);
    } catch (const slimtrain::Error&) {
    }
  }
  return 0;
}
