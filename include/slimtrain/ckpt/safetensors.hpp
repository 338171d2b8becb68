#pragma once
/**
 * @brief safetensors files read and written natively: tensors by name, one file or a checkpoint
 * sharded through its model.safetensors.index.json (as save_pretrained writes it). The header's
 * checks are safetensors_header.hpp's; reading a tensor reads only its bytes, so a rank that
 * needs some tensors reads only those.
 */
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "slimtrain/ckpt/safetensors_header.hpp"

namespace slimtrain::ckpt {

/** @brief The LibTorch dtype of a safetensors dtype; DataError naming `where` for one LibTorch
 * cannot hold (U16, U32, U64, F8_*). */
torch::ScalarType torch_dtype_of(const std::string& dtype, const std::string& where);
/** @brief The safetensors name of a LibTorch dtype ("F32"); Error for one it has none for. */
std::string safetensors_dtype_of(torch::ScalarType type);

/** @brief One safetensors file, its header read and checked when it is opened. */
class SafetensorsFile {
 public:
  explicit SafetensorsFile(std::string path);
  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  /** @brief The tensor `name`, on the CPU, of its stored dtype; DataError when absent. */
  torch::Tensor read(const std::string& name) const;
  /** @brief Elements [from, from + count) of `name` in row-major order, [count], of its stored
   * dtype: only their bytes are read (a rank's slice of a tensor). Error past the tensor's end. */
  torch::Tensor read_elements(const std::string& name, std::int64_t from, std::int64_t count) const;

 private:
  std::string path_;
  SafetensorsHeader header_;
};

/**
 * @brief A checkpoint's tensors: PATH a .safetensors file, a model.safetensors.index.json, or a
 * directory holding either (the index first). The index's weight_map names each tensor's file;
 * each file is opened (and its header checked) when one of its tensors is first asked for.
 */
class SafetensorsSet {
 public:
  explicit SafetensorsSet(const std::string& path);
  /** @brief Every tensor's name, sorted. */
  std::vector<std::string> names() const;
  bool has(const std::string& name) const { return file_of_.count(name) > 0; }
  /** @brief The header entry of `name` (opens its file); DataError when absent. */
  const SafetensorsEntry& entry(const std::string& name);
  torch::Tensor read(const std::string& name);
  torch::Tensor read_elements(const std::string& name, std::int64_t from, std::int64_t count);
  /** @brief The files, in the order the index names them (one for a single file). */
  const std::vector<std::string>& files() const { return files_; }
  /** @brief The first file's __metadata__. */
  const std::map<std::string, std::string>& metadata();

 private:
  SafetensorsFile& open(const std::string& file);
  std::string where_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> file_of_;  // tensor -> file
  std::map<std::string, std::unique_ptr<SafetensorsFile>> opened_;
};

/**
 * @brief Writes `tensors` (any device, any layout: copied to contiguous CPU memory) to `path` in
 * the order given, with `metadata` as __metadata__, the header padded with spaces to a multiple
 * of 8 bytes as the reference writes it. Names must be unique (Error otherwise). Not atomic: the
 * caller writes to a temporary and renames.
 */
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace slimtrain::ckpt
