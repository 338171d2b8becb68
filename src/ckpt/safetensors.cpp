#include "slimtrain/ckpt/safetensors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "slimtrain/ckpt/safetensors_shards.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::ckpt {

namespace {

namespace fs = std::filesystem;

const std::vector<std::pair<std::string, torch::ScalarType>>& dtype_table() {
  static const std::vector<std::pair<std::string, torch::ScalarType>> table = {
      {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
      {"F64", torch::kFloat64}, {"I64", torch::kInt64},   {"I32", torch::kInt32},
      {"I16", torch::kInt16},   {"I8", torch::kInt8},     {"U8", torch::kUInt8},
      {"BOOL", torch::kBool}};
  return table;
}

// pread until `n` bytes are in, or a DataError naming the file.
void read_exactly(int fd, void* to, std::size_t n, std::uint64_t at, const std::string& where) {
  auto* bytes = static_cast<std::uint8_t*>(to);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, bytes + done, n - done, static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) SLIMTRAIN_THROW(DataError, where, ": cannot read: ", std::strerror(errno));
    if (r == 0) SLIMTRAIN_THROW(DataError, where, ": the file ended early (truncated?)");
    done += static_cast<std::size_t>(r);
  }
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) SLIMTRAIN_THROW(DataError, path, ": cannot open: ", std::strerror(errno));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(DataError, path, ": not JSON (", e.what(), ")");
  }
}

}  // namespace

torch::ScalarType torch_dtype_of(const std::string& dtype, const std::string& where) {
  for (const auto& [name, type] : dtype_table())
    if (name == dtype) return type;
  SLIMTRAIN_THROW(DataError, where, ": dtype ", dtype,
                  " has no LibTorch type slimtrain reads (it reads F32, F16, BF16, F64, I64, "
                  "I32, I16, I8, U8, BOOL)");
}

std::string safetensors_dtype_of(torch::ScalarType type) {
  for (const auto& [name, t] : dtype_table())
    if (t == type) return name;
  SLIMTRAIN_THROW(Error, "safetensors has no dtype for ", type);
}

SafetensorsFile::SafetensorsFile(std::string path)
    : path_(std::move(path)), header_(read_safetensors_header(path_)) {}

torch::Tensor SafetensorsFile::read(const std::string& name) const {
  const SafetensorsEntry* e = header_.find(name);
  if (e == nullptr) SLIMTRAIN_THROW(DataError, path_, ": holds no tensor '", name, "'");
  return read_elements(name, 0, e->numel()).view(e->shape);
}

torch::Tensor SafetensorsFile::read_elements(const std::string& name, std::int64_t from,
                                             std::int64_t count) const {
  const SafetensorsEntry* e = header_.find(name);
  if (e == nullptr) SLIMTRAIN_THROW(DataError, path_, ": holds no tensor '", name, "'");
  const std::string where = path_ + ": tensor '" + name + "'";
  if (from < 0 || count < 0 || from + count > e->numel())
    SLIMTRAIN_THROW(Error, where, ": elements ", from, "..", from + count, " asked of ",
                    e->numel());
  const torch::ScalarType type = torch_dtype_of(e->dtype, where);
  torch::Tensor t = torch::empty({count}, torch::dtype(type));
  if (count == 0) return t;
  // Row-major: the elements are one run of bytes.
  const auto size = static_cast<std::uint64_t>(torch::elementSize(type));
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) SLIMTRAIN_THROW(DataError, path_, ": cannot open: ", std::strerror(errno));
  try {
    read_exactly(fd, t.data_ptr(), static_cast<std::size_t>(count) * size,
                 header_.data_start() + e->begin + static_cast<std::uint64_t>(from) * size, where);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return t;
}

SafetensorsSet::SafetensorsSet(const std::string& path) : where_(path) {
  std::string file = path;
  if (fs::is_directory(path)) {
    const fs::path dir(path);
    if (fs::exists(dir / "model.safetensors.index.json"))
      file = (dir / "model.safetensors.index.json").string();
    else if (fs::exists(dir / "model.safetensors"))
      file = (dir / "model.safetensors").string();
    else
      SLIMTRAIN_THROW(DataError, path,
                      ": holds neither model.safetensors nor model.safetensors.index.json");
  }
  where_ = file;
  if (file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0) {
    const nlohmann::json index = read_json(file);
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      SLIMTRAIN_THROW(DataError, file, ": no \"weight_map\" object (not a safetensors index)");
    const fs::path dir = fs::path(file).parent_path();
    std::set<std::string> seen;
    for (const auto& [tensor, shard] : index["weight_map"].items()) {
      if (!shard.is_string())
        SLIMTRAIN_THROW(DataError, file, ": weight_map's '", tensor, "' is not a file name");
      const std::string shard_path = (dir / shard.get<std::string>()).string();
      file_of_[tensor] = shard_path;
      if (seen.insert(shard_path).second) files_.push_back(shard_path);
    }
    return;
  }
  SafetensorsFile& f = open(file);
  files_.push_back(file);
  for (const SafetensorsEntry& e : f.header().tensors) file_of_[e.name] = file;
}

SafetensorsFile& SafetensorsSet::open(const std::string& file) {
  auto it = opened_.find(file);
  if (it == opened_.end())
    it = opened_.emplace(file, std::make_unique<SafetensorsFile>(file)).first;
  return *it->second;
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> out;
  for (const auto& [name, file] : file_of_) out.push_back(name);
  return out;
}

const SafetensorsEntry& SafetensorsSet::entry(const std::string& name) {
  const auto it = file_of_.find(name);
  if (it == file_of_.end()) SLIMTRAIN_THROW(DataError, where_, ": holds no tensor '", name, "'");
  const SafetensorsEntry* e = open(it->second).header().find(name);
  if (e == nullptr)
    SLIMTRAIN_THROW(DataError, where_, ": names '", name, "' in ", it->second,
                    ", which does not hold it");
  return *e;
}

torch::Tensor SafetensorsSet::read(const std::string& name) {
  entry(name);
  return open(file_of_.at(name)).read(name);
}

torch::Tensor SafetensorsSet::read_elements(const std::string& name, std::int64_t from,
                                            std::int64_t count) {
  entry(name);
  return open(file_of_.at(name)).read_elements(name, from, count);
}

const std::map<std::string, std::string>& SafetensorsSet::metadata() {
  return open(files_.front()).header().metadata;
}

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<TensorToWrite> stream;
  for (const auto& [name, tensor] : tensors) {
    const torch::Tensor t = tensor;
    stream.push_back({name, t.scalar_type(), t.sizes().vec(), [t] { return t; }});
  }
  write_safetensors_stream(path, stream, metadata);
}

}  // namespace slimtrain::ckpt
