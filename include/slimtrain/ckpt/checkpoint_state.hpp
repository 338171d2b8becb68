#pragma once
/** @brief What a checkpoint holds: counters, metadata, named host tensors and opaque blobs. */
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::ckpt {

/** @brief A named tensor; CPU and contiguous when written (the writer checks). */
struct TensorEntry {
  std::string name;
  torch::Tensor tensor;
};

/** @brief Everything needed to continue a run from a step boundary. */
struct CheckpointState {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  std::int64_t epoch_step = 0;  ///< data-order cursor: steps already taken in `epoch`
  nlohmann::json meta;          ///< model spec, config fingerprint, last metrics, seeds, world size
  std::vector<TensorEntry> tensors;          ///< "model/<param or buffer name>", ...
  std::map<std::string, std::string> blobs;  ///< opaque bytes, e.g. "optimizer", "rng"
  /** @brief Files every rank writes itself (rank_files.hpp), which the writer waits for. */
  std::vector<std::string> rank_files;
  double rank_files_timeout_s = 600.0;
};

/** @brief Manifest dtype name of a torch dtype; throws Error for dtypes the format lacks. */
std::string dtype_name(torch::ScalarType type);
/** @brief Inverse of dtype_name; throws DataError naming `context` for unknown names. */
torch::ScalarType scalar_type_from_name(const std::string& name, const std::string& context);

}  // namespace slimtrain::ckpt
