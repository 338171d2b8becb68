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
  std::string model;  ///< "torchscript:PATH": the module file of a torchscript checkpoint
  std::string split = "test";
  std::string output;
  std::int64_t batch_size = 512;
  int threads = 0;  ///< LibTorch threads (0: LibTorch's default)
  bool force = false;
  std::uint64_t max_shard_bytes = 5'000'000'000;  ///< export --hf: save_pretrained's default
  bool merge_lora = false;  ///< export --hf of a --lora run: the merged model, not the adapter
};

/** @brief Runs as one process; the output appears atomically. Returns the number of rows. */
std::int64_t run_embed_job(const EmbedJobConfig& config);

/**
 * @brief `slimtrain export --torchscript`: the checkpoint's TorchScript module with its trained
 * weights, in eval mode, written atomically to `config.output`. Returns the checkpoint used.
 */
std::string run_script_export(const EmbedJobConfig& config);

}  // namespace slimtrain::cli
