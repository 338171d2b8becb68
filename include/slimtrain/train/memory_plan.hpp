#pragma once
/**
 * @brief What one rank will hold, planned before any weight is loaded: weights, gradients,
 * optimizer state and an activation estimate, from the model's size, the world size, the --shard
 * mode, the precision, the optimizer and the batch shape. The run refuses to start (exit 2) when
 * the plan exceeds the rank's budget, naming the numbers and the smallest --shard that fits,
 * instead of dying in its first step; the done event puts the measured peak beside it.
 *
 * Bytes a trainable parameter costs (P values, N ranks): fp32 weights 4 (every rank holds every
 * weight in all three modes), gradients 4 (none, optimizer) or 4/N (gradients: reduce-scattered
 * into the rank's shard as backward makes them, plus two buckets in flight, a tensor larger than
 * --bucket-mb being a bucket of its own; one where the gradients are made in pieces), AdamW
 * state 8 and
 * SGD momentum 4 (divided by N with any --shard). bf16 adds autocast's bf16 copies of the weights
 * (2). Activations: Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
 * Transformer Models", table 2), per layer 34sbh + 5as^2b bytes in 16 bits for s tokens, batch b,
 * width h and a heads, taken apart by what each product stores so that another feed-forward width
 * or a gated (SwiGLU) one is counted too; in fp32 twice that; no s^2 term where the attention
 * kernel is fused (LibTorch 2.x).
 */
#include <cstdint>
#include <string>

#include "slimtrain/train/flat_layout.hpp"

namespace slimtrain::train {

/** @brief The model as the plan sees it, before it exists. */
struct ModelSize {
  std::int64_t parameters = 0;  ///< every value, frozen or not
  std::int64_t trainable = 0;   ///< what gradients and the optimizer cover
  std::int64_t largest = 0;     ///< the largest trainable tensor: a bucket of its own
  std::string source;           ///< "the safetensors headers of DIR", "the model as built"
  // A transformer's shape, for the activation estimate; layers 0: none is estimated.
  std::int64_t layers = 0, hidden = 0, heads = 0, ffn = 0;
  bool gated_ffn = false;
  std::int64_t tokens = 0;  ///< per sample: the longest sequence, or an image's patches
  /** @brief --shard parameters: the parameters of the largest group of weights gathered at once
   * (a decoder layer's feed-forward gate and up projections, or its embeddings); 0: gathered
   * whole. */
  std::int64_t largest_group = 0;
};

/** @brief What the run will do with it. */
struct PlanSettings {
  int world = 1;
  ShardMode shard = ShardMode::none;
  std::string optimizer = "sgd";  ///< sgd | adamw (| adam)
  double momentum = 0.9;
  bool bf16 = false;
  bool frozen_bf16 = false;  ///< --lora with bf16: the frozen base held in bf16 (no master)
  bool lora = false;         ///< --lora: --shard parameters is not offered (not built with it)
  bool bf16_wire = false;    ///< --grad-compression bf16
  bool fused_attention = false;
  bool overlap = true;        ///< buckets start during backward (--overlap not off)
  bool gather_ahead = false;  ///< --shard parameters: the next group gathered early
  /** @brief --shard parameters with a gated model and the grad sink (CPU): its linear layers'
   * gradients are reduce-scattered in pieces as they are made, only the embeddings' made whole. */
  bool gradients_in_pieces = false;
  /** @brief --grad-accum: above 1 the earlier micro-batches' gradients add up whole in .grad
   * (--shard gradients and parameters too) until the last one's backward reduce-scatters them. */
  std::int64_t grad_accum = 1;
  std::int64_t batch = 1;           ///< per rank, one micro-batch
  bool recompute_layers = false;    ///< --activation-checkpointing layers
  std::uint64_t bucket_bytes = 0;   ///< a gradient bucket
  std::uint64_t process_bytes = 0;  ///< what the process holds before the model (host only)
};

/** @brief Bytes per rank. */
struct MemoryPlan {
  ShardMode shard = ShardMode::none;
  std::uint64_t weights = 0, gradients = 0, optimizer = 0, activations = 0, process = 0;
  bool activations_estimated = false;
  std::uint64_t total() const { return weights + gradients + optimizer + activations + process; }
  /** @brief "9.81 GB per rank with --shard gradients (weights 2.30, gradients ...)". */
  std::string describe() const;
};

MemoryPlan plan_memory(const ModelSize& model, const PlanSettings& settings);

/** @brief A rank's budget and where it came from ("--memory-per-rank", "GPU 0's free memory"). */
struct MemoryBudget {
  std::uint64_t bytes = 0;  ///< 0: unknown, nothing is refused
  std::string source;
  int rank = 0;  ///< the rank with the smallest budget
};

/**
 * @brief "" when the plan fits the budget; else why not and the smallest change that fits: the
 * first --shard mode (optimizer, then gradients) whose plan fits at this world size, else the
 * smallest power-of-two world size (up to 4096) at which --shard gradients fits, else the floor no
 * --shard mode goes below (every rank holds every weight) and what shrinks.
 */
std::string refuse_unless_fits(const ModelSize& model, const PlanSettings& settings,
                               const MemoryBudget& budget);

/** @brief "12.34 GB" (10^9 bytes, as the issue and DeepSpeed's estimators count). */
std::string gigabytes(std::uint64_t bytes);

}  // namespace slimtrain::train
