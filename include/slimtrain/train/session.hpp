#pragma once
/**
 * @brief Everything one training run is made of, built once at start-up: the two planes, the
 * device, the model (with rank 0's weights on every rank), the optimiser, the loader, the
 * gradient sync, the run log. The trainer's loop only uses what is here.
 */
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "slimtrain/comm/bandwidth_probe.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/fault_injection.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/train_loader.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/hf/pretrained.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/config.hpp"
#include "slimtrain/train/flat_layout.hpp"
#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/layer_gate.hpp"
#include "slimtrain/train/master_weights.hpp"
#include "slimtrain/train/memory_plan.hpp"
#include "slimtrain/train/placement.hpp"
#include "slimtrain/train/precision.hpp"
#include "slimtrain/train/run_log.hpp"
#include "slimtrain/train/schedule.hpp"
#include "slimtrain/train/shard_loading.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace slimtrain::train {

/** @brief Where training is: global step, epoch, and step within the epoch. */
struct Position {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  std::int64_t epoch_step = 0;
};

struct Session {
  const TrainConfig& cfg;
  runtime::Runtime& rt;
  /** @brief Decisions: the per-step control reduction, agreements, resume paths. */
  std::unique_ptr<comm::ControlPlane> control;
  /** @brief Evaluation statistics only: a late evaluation cannot delay the step decisions. */
  std::unique_ptr<comm::ControlPlane> eval_control;
  runtime::DeviceBinding device;
  std::vector<RankPlace> placement;
  torch::Device torch_device{torch::kCPU};
  data::DatasetInfo info;
  model::ModelSpec spec;
  std::shared_ptr<model::ClassifierImpl> model;
  /** @brief Rank 0's load of an hf:DIR checkpoint, told once whether the run resumes is known
   * (a resumed run replaces the weights, so the new head's warning would only mislead). */
  std::optional<model::hf::PretrainedLoad> hf_load;
  /** @brief --lora: the base model its checkpoints leave out (eval::lora_base_record), else null.
   */
  nlohmann::json lora_base;
  /** @brief --shard parameters from hf:DIR: the checkpoint each rank reads its slices from. */
  std::optional<ShardLoading> shard_loading;
  /** @brief Gradient buckets and the weight broadcast, on the model's device. */
  std::unique_ptr<comm::DataPlane> data_plane;
  /** @brief The data plane's bandwidth measured at start-up (empty with --floor-bandwidth). */
  comm::BandwidthProbe bandwidth;
  /** @brief Bytes/s the data plane's deadlines assume: --floor-bandwidth, or measured / 4. */
  double floor_bytes_per_s = 0;
  /** @brief The data plane's largest single all-reduce, and why (--chunk-mb, or measured). */
  std::size_t chunk_bytes = 0;
  std::string chunk_reason;
  ShardMode shard = ShardMode::none;
  /** @brief Buckets and shards of the trainable parameters (world size 1 without --shard). */
  std::unique_ptr<FlatLayout> layout;
  /** @brief --shard optimizer or gradients: the weights' flat buffer and this rank's shard. */
  std::unique_ptr<ShardedParams> shards;
  /** @brief --shard parameters with a model that gates its layers: gathers layer by layer. */
  std::unique_ptr<LayerGate> layer_gate;
  /** @brief --weights bf16: the float32 masters the optimizer steps, beside the bf16 weights. */
  std::unique_ptr<MasterWeights> masters;
  /** @brief Over this rank's shard with --shard, the masters with --weights bf16, else over every
   * trainable parameter. */
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  /** @brief What the optimizer steps, one tensor per trainable parameter (--shard none). */
  std::vector<torch::Tensor> optimized_parameters() const;
  std::unique_ptr<LrSchedule> schedule;
  std::unique_ptr<data::TrainLoader> loader;
  std::unique_ptr<GradientSync> sync;
  OverlapChoice overlap;
  /** @brief Whether built-in linear layers hand their weight gradients to the sync (sync_choice).
   */
  OverlapChoice grad_sink;
  /** @brief --overlap-gather resolved: the weights gathered during the next forward (--shard). */
  OverlapChoice gather_overlap;
  PrecisionChoice precision;  ///< --precision resolved for this model and device
  /**
   * @brief The GPU step (step_update.hpp): fused optimizers, the non-finite vote on the device,
   * nothing read back in a steady step. On a CUDA device with LibTorch 2.4 or later (and on a
   * CPU only for tests: SLIMTRAIN_TEST_DEVICE_STEP=1).
   */
  bool device_step = false;
  std::unique_ptr<RunLog> run_log;
  FaultPlan fault;
  std::int64_t total_steps = 0;  ///< optimizer steps
  /** @brief This process's resident bytes before the model existed (the done event's memory). */
  std::uint64_t baseline_resident_bytes = 0;
  std::uint64_t startup_peak_resident_bytes = 0;  ///< VmHWM before training began (a resume's)
  /** @brief VmHWM once the model's weights are in place (built, loaded, sharded), before the
   * gradient buffers and a resume: what loading a checkpoint cost. */
  std::uint64_t loading_peak_resident_bytes = 0;
  /** @brief What this rank was planned to hold, and its budget (memory_check.hpp). */
  MemoryPlan memory_plan;
  MemoryBudget memory_budget;
  /** @brief Optimizer steps per epoch: the loader's batches in whole groups of --grad-accum. */
  std::int64_t steps_per_epoch = 0;
  /** @brief open_session's stages and their seconds on this rank, in order. */
  std::vector<std::pair<std::string, double>> startup_seconds;
  std::string eval_split;   ///< periodic evaluations ("": none, with --eval-every 0)
  std::string final_split;  ///< the final evaluation ("": skipped with a note)

  Session(const TrainConfig& config, runtime::Runtime& runtime) : cfg(config), rt(runtime) {}

  /**
   * @brief Buffers (BatchNorm statistics) from rank 0 to every rank. Ranks see different data,
   * so their running statistics drift apart; they are made identical before every evaluation
   * and every checkpoint (as DDP's broadcast_buffers does, there at every forward).
   */
  void sync_buffers();
  /**
   * @brief The weights whole and identical on every rank: any all-gather still in flight (with
   * --overlap-gather) waited for, then sync_buffers(). Before anything reads the weights outside
   * a training step (evaluation, checkpoints). With --shard parameters and `whole` false the
   * gathers in flight end and nothing more is gathered: a checkpoint gathers bucket by bucket.
   */
  void settle_weights(bool whole = true);
  /** @brief What the optimizer updates, with the logical elements each holds. */
  std::vector<OptimizedSpan> optimizer_spans() const;
  /** @brief Seconds an I/O phase moving about `bytes` may take (--io-timeout, --io-floor-...). */
  double io_deadline(std::uint64_t bytes) const;
  /** @brief An upper estimate of one checkpoint's bytes: weights, optimiser state, buffers. */
  std::uint64_t checkpoint_bytes_estimate() const;
  /**
   * @brief Whether an epoch with `batches_done` of the loader's batches behind it has no whole
   * optimizer step left (the batches past the last whole group of --grad-accum are skipped).
   */
  bool epoch_over(std::int64_t batches_done) const {
    return batches_done + cfg.grad_accum > loader->steps_per_epoch();
  }
};

/** @brief "a, b, c" */
std::string join(const std::vector<std::string>& items);

/** @brief The augmentation options of a run's configuration. */
data::AugmentOptions augment_options(const TrainConfig& config);

/**
 * @brief Builds the session up to (not including) resume: planes, device, data, model with rank
 * 0's weights broadcast over the data plane, optimiser, loader, schedule. Collective.
 */
std::unique_ptr<Session> open_session(const TrainConfig& config, runtime::Runtime& runtime);

/**
 * @brief After resume: the gradient sync (overlap agreed across ranks), the run log, the start
 * lines and the start event.
 */
void start_session(Session& s, const Position& at, bool resumed, double resume_ms);

}  // namespace slimtrain::train
