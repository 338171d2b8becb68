#pragma once
/**
 * @brief A model written as save_pretrained writes it: one model.safetensors, or, when the
 * tensors come to more than the largest shard allowed, model-00001-of-0000N.safetensors files
 * and a model.safetensors.index.json naming each tensor's file. Tensors are made one at a time
 * (each asked for just before its bytes are written, and dropped after), so that a writer never
 * holds more than one tensor beside what it already had.
 */
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace slimtrain::ckpt {

/** @brief A tensor to write: its name, dtype and shape (for the header), and how to make it. */
struct TensorToWrite {
  std::string name;
  torch::ScalarType dtype = torch::kFloat32;
  std::vector<std::int64_t> shape;
  std::function<torch::Tensor()> make;  ///< called once, when its bytes are written
  std::uint64_t bytes() const;
};

/**
 * @brief Writes `tensors` to `path` in the order given, each made when its bytes are due and
 * checked against the dtype and shape the header promised (Error otherwise). Not atomic: the
 * caller writes into a temporary and renames.
 */
void write_safetensors_stream(const std::string& path, const std::vector<TensorToWrite>& tensors,
                              const std::map<std::string, std::string>& metadata);

/**
 * @brief Writes `tensors` into the directory `dir` (which exists): model.safetensors when they
 * fit in `max_shard_bytes`, else shards filled in order, a tensor opening a new shard when it
 * would take the current one past the limit (a tensor larger than the limit gets a shard of its
 * own, as transformers does), and model.safetensors.index.json (metadata.total_size, weight_map).
 * Returns the file names written, the index last.
 */
std::vector<std::string> write_safetensors_shards(
    const std::string& dir, const std::vector<TensorToWrite>& tensors,
    std::uint64_t max_shard_bytes, const std::map<std::string, std::string>& metadata);

}  // namespace slimtrain::ckpt
