#include "slimtrain/ckpt/inspect_safetensors.hpp"

#include <filesystem>
#include <map>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::ckpt {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

bool is_safetensors_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (ends_with(path, ".safetensors") || ends_with(path, ".safetensors.index.json")) return true;
  return fs::is_directory(path) && (fs::exists(fs::path(path) / "model.safetensors") ||
                                    fs::exists(fs::path(path) / "model.safetensors.index.json"));
}

void inspect_safetensors(const std::string& path, bool validate, std::ostream& out) {
  SafetensorsSet set(path);
  std::map<std::string, std::pair<std::int64_t, std::uint64_t>> by_dtype;  // elements, bytes
  const std::vector<std::string> names = set.names();
  for (const std::string& name : names) {
    const SafetensorsEntry& e = set.entry(name);
    by_dtype[e.dtype].first += e.numel();
    by_dtype[e.dtype].second += e.end - e.begin;
  }
  out << path << ": safetensors, " << set.files().size() << " file"
      << (set.files().size() == 1 ? "" : "s") << ", " << names.size() << " tensors:";
  for (const auto& [dtype, sizes] : by_dtype)
    out << " " << dtype << " " << sizes.first << " elements (" << sizes.second << " bytes)";
  out << "\n";
  for (const auto& [key, value] : set.metadata())
    out << "  metadata " << key << ": "
        << (value.size() > 200 ? value.substr(0, 200) + "..." : value) << "\n";
  for (const std::string& name : names) {
    const SafetensorsEntry& e = set.entry(name);
    out << "  " << name << "  " << e.dtype << " " << shape_text(e.shape) << "\n";
    if (!validate) continue;
    const torch::Tensor t = set.read(name);
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>())
      SLIMTRAIN_THROW(DataError, path, ": tensor '", name, "' holds NaN or Inf");
  }
  if (validate) out << "valid: every tensor read, every floating one finite\n";
}

}  // namespace slimtrain::ckpt
