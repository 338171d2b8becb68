#include "slimtrain/ckpt/safetensors_shards.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"

namespace slimtrain::ckpt {

std::uint64_t TensorToWrite::bytes() const {
  std::uint64_t n = torch::elementSize(dtype);
  for (const std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

void write_safetensors_stream(const std::string& path, const std::vector<TensorToWrite>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors is little-endian");
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    if (t.name == "__metadata__" || header.contains(t.name))
      SLIMTRAIN_THROW(Error, path, ": tensor '", t.name, "' given twice (or reserved)");
    header[t.name] = {{"dtype", safetensors_dtype_of(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes()}}};
    offset += t.bytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(text.size() >> (8 * i));
  out.write(reinterpret_cast<const char*>(length), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const TensorToWrite& want : tensors) {
    const torch::Tensor t = want.make().detach().to(torch::kCPU).contiguous();
    if (t.scalar_type() != want.dtype || t.sizes().vec() != want.shape)
      SLIMTRAIN_THROW(Error, path, ": tensor '", want.name, "' came as ", t.scalar_type(), " ",
                      t.sizes(), " where the header says ", want.dtype, " ",
                      c10::IntArrayRef(want.shape));
    if (t.numel() > 0)
      out.write(static_cast<const char*>(t.data_ptr()),
                static_cast<std::streamsize>(t.numel() * t.element_size()));
  }
  out.flush();
  if (!out) SLIMTRAIN_THROW(Error, path, ": cannot write: ", std::strerror(errno));
}

std::vector<std::string> write_safetensors_shards(
    const std::string& dir, const std::vector<TensorToWrite>& tensors,
    std::uint64_t max_shard_bytes, const std::map<std::string, std::string>& metadata) {
  if (max_shard_bytes == 0) SLIMTRAIN_THROW(Error, "write_safetensors_shards: a limit of 0 bytes");
  std::vector<std::vector<TensorToWrite>> shards(1);
  std::uint64_t in_shard = 0, total = 0;
  for (const TensorToWrite& t : tensors) {
    if (!shards.back().empty() && in_shard + t.bytes() > max_shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(t);
    in_shard += t.bytes();
    total += t.bytes();
  }
  if (shards.size() == 1) {
    write_safetensors_stream(dir + "/model.safetensors", tensors, metadata);
    files::fsync_file(dir + "/model.safetensors");
    return {"model.safetensors"};
  }
  std::vector<std::string> written;
  nlohmann::json weight_map = nlohmann::json::object();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    write_safetensors_stream(dir + "/" + name, shards[i], metadata);
    files::fsync_file(dir + "/" + name);
    for (const TensorToWrite& t : shards[i]) weight_map[t.name] = name;
    written.emplace_back(name);
  }
  const nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  const std::string index_path = dir + "/model.safetensors.index.json";
  std::ofstream out(index_path, std::ios::binary | std::ios::trunc);
  out << index.dump(2) << "\n";
  out.close();
  if (!out) SLIMTRAIN_THROW(Error, index_path, ": cannot write: ", std::strerror(errno));
  files::fsync_file(index_path);
  written.emplace_back("model.safetensors.index.json");
  return written;
}

}  // namespace slimtrain::ckpt
