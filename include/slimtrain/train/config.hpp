#pragma once
/** @brief Everything `slimtrain train` can be told, with the defaults --help shows. */
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "slimtrain/model/model_spec.hpp"
#include "slimtrain/train/optim_config.hpp"
#include "slimtrain/train/schedule.hpp"

namespace slimtrain::train {

struct TrainConfig {
  std::string data;
  /** @brief Every option as given or defaulted (start event's "config"), for the report. */
  std::vector<std::pair<std::string, std::string>> settings;
  std::string out;
  std::string model = "cnn-small";  ///< mlp, cnn-small, cnn-bn, vit-tiny or torchscript:PATH
  /**
   * @brief The model options (--mlp-widths, --vit-*, --cnn-*, --text-*, --label-smoothing, the
   * torchscript ones) as the model spec holds them; its name and shapes come from --model and the
   * data file at start-up.
   */
  model::ModelSpec arch;
  bool strict_slim = false;  ///< refuse a model whose forward returns more than logits/loss

  std::int64_t epochs = 1;
  std::int64_t max_steps = 0;    ///< 0: epochs decide
  std::int64_t batch_size = 64;  ///< per rank
  /** @brief Micro-batches of batch_size per optimizer step, reduced once (DDP's no_sync). */
  std::int64_t grad_accum = 1;
  std::uint64_t seed = 42;
  OptimConfig optim;
  ScheduleConfig schedule;
  /** @brief Consecutive steps skipped for a non-finite loss or gradient norm before the job ends.
   */
  int max_nonfinite_steps = 10;
  /** @brief Checkpoint writes that may fail in a row (a full disk) before the job ends. */
  int max_failed_checkpoints = 3;
  double clip_grad_norm = 0.0;

  std::string device = "cpu";
  std::string precision = "fp32";  ///< fp32, bf16 (autocast; fp32 weights, gradients) or auto
  /** @brief fp32, or bf16: trained weights in bf16 with float32 masters (master_weights.hpp). */
  std::string weights = "fp32";
  /** @brief on: TF32 tensor cores for float32 matrix products and convolutions on GPUs. */
  std::string tf32 = "on";
  int threads = 0;
  /// auto (channels-last for the models that prefer it, on CPU), contiguous, or channels-last
  std::string memory_format = "auto";
  /// own (model/max_pool.hpp's loop where it applies) or libtorch (torch::max_pool2d everywhere)
  std::string max_pool = "own";
  std::string data_mode = "auto";
  std::int64_t memory_budget_mb = 2048;
  /** @brief --memory-per-rank in GB (10^9 bytes): the memory plan's budget; 0: measured. */
  double memory_per_rank_gb = 0.0;
  /** @brief Training-time augmentation (data/augment.hpp); evaluation never augments. */
  int augment_crop_padding = 0;
  bool augment_flip = false;
  double augment_rotate_deg = 0.0;
  double augment_erase = 0.0;
  /** @brief Layout 2: ragged inputs cut to this many elements (0: never). */
  std::int64_t max_length = 0;
  /** @brief Layout 2: batches of similar lengths (data::LoaderOptions::group_by_length). */
  bool group_by_length = false;

  std::size_t bucket_bytes = 0;  ///< 0: 4 MiB on a CPU, 25 MiB on a GPU (session_startup.cpp)
  std::size_t chunk_bytes = 0;   ///< 0: MPI: 4 MiB or 1 MiB, whichever is faster; NCCL: no pieces
  std::string overlap = "auto";  ///< auto, on or off (see choose_overlap)
  std::string grad_compression = "none";  ///< none, or bf16 on the wire (grad_sync.hpp)
  std::string shard = "none";  ///< none, optimizer or gradients (ZeRO 0-2, flat_layout.hpp)
  /// --shard: all-gather the updated weights while the next forward runs (auto, on or off)
  std::string overlap_gather = "auto";
  /// none, or layers: each transformer layer's activations recomputed in backward (recompute.hpp)
  std::string activation_checkpointing = "none";
  double collective_timeout_s = 120.0;
  double floor_bandwidth_mbps = 0.0;  ///< 0: measured at start-up (bandwidth_probe.hpp)
  /** @brief I/O phases (resume, waiting for a checkpoint write): base + size / io floor. */
  double io_timeout_s = 600.0;
  double io_floor_bandwidth_mbps = 20.0;

  std::int64_t eval_every = 0;  ///< steps; 0: only at the end
  std::string eval_split;       ///< "": val if present, else test, else none; "none"
  std::string final_split;      ///< "": test if present, else eval_split; "none"
  std::int64_t eval_batch_size = 512;
  double eval_deadline_s = 60.0;
  int eval_retries = 0;
  /** @brief Classes up to which evaluations keep the C x C matrix (eval/eval_stats.hpp). */
  std::int64_t confusion_max_classes = 100;

  std::int64_t log_every = 50;
  double straggler_threshold = 0.25;  ///< warn at this fraction over the median; 0: never
  int straggler_windows = 3;          ///< for this many log windows in a row
  std::int64_t checkpoint_every = 0;  ///< steps; 0: none on a step schedule
  double checkpoint_minutes = 0.0;
  int keep_last = 3;
  /**
   * @brief "": retention keeps the most accurate of the checkpoints that fall on evaluation steps.
   * Named (accuracy, macro_f1, loss): also a checkpoint at each evaluation that sets a new best.
   */
  std::string best_metric;
  std::string resume = "auto";
};

}  // namespace slimtrain::train
