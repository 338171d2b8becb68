#pragma once
/**
 * @brief `slimtrain export --embeddings`: the model's pre-head features for one split, written to
 * HDF5 as /embeddings [N, F] float32 and /labels [N] int64 in the split's row order. This is the
 * only path by which features leave a model (forward returns logits and loss only).
 */

#include <cstdint>
#include <string>

namespace slimtrain::cli {

struct EmbedJobConfig {
  std::string data;
  std::string checkpoint;
  std::string split = "test";
  std::string output;
  std::int64_t batch_size = 512;
  int threads = 0;  ///< LibTorch threads (0: LibTorch's default)
  bool force = false;
};

/** @brief Runs as one process; the output appears atomically. Returns the number of rows. */
std::int64_t run_embed_job(const EmbedJobConfig& config);

}  // namespace slimtrain::cli
