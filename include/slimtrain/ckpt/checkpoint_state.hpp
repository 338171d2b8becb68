#pragma once
/** @brief What a checkpoint holds: counters, metadata, named host tensors and opaque blobs. */
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace slimtrain::ckpt {

/** @brief A named tensor; CPU and contiguous when written (the writer checks). */
struct TensorEntry {
  TensorEntry() = default;
  TensorEntry(std::string name_, torch::Tensor tensor_)
      : name(std::move(name_)), tensor(std::move(tensor_)) {}
  std::string name;
  torch::Tensor tensor;  ///< deferred: its shape and dtype, no memory (read_elements reads it)
  bool deferred = false;
  std::uint64_t offset = 0;  ///< read: where its bytes start in the state's tensors_file
  /** @brief Written: the tensor, made by the writer once the rank files are in `dir` (a deferred
   * entry's bytes come from other ranks' files). */
  std::function<torch::Tensor(const std::string& dir)> produce;
};

/** @brief Everything needed to continue a run from a step boundary. */
struct CheckpointState {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  std::int64_t epoch_step = 0;  ///< data-order cursor: steps already taken in `epoch`
  nlohmann::json meta;          ///< model spec, config fingerprint, last metrics, seeds, world size
  std::vector<TensorEntry> tensors;          ///< "model/<param or buffer name>", ...
  std::map<std::string, std::string> blobs;  ///< opaque bytes, e.g. "optimizer", "rng"
  std::string tensors_file;  ///< read: the file the tensors came from (deferred ones are there)
  /** @brief Files every rank writes itself (rank_files.hpp), which the writer waits for. */
  std::vector<std::string> rank_files;
  /** @brief Rank files the tensors are made from (produce), waited for the same way and removed
   * once tensors.bin is written: not part of the checkpoint. */
  std::vector<std::string> source_files;
  double rank_files_timeout_s = 600.0;
};

/** @brief Manifest dtype name of a torch dtype; throws Error for dtypes the format lacks. */
std::string dtype_name(torch::ScalarType type);
/** @brief Inverse of dtype_name; throws DataError naming `context` for unknown names. */
torch::ScalarType scalar_type_from_name(const std::string& name, const std::string& context);

}  // namespace slimtrain::ckpt
