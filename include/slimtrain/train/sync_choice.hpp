#pragma once
/**
 * @brief How a run's gradients travel, decided once at start-up: whether buckets start during
 * backward (--overlap) and what they travel as (--grad-compression). GradientSync does what these
 * say.
 */
#include <cstddef>
#include <string>

#include "slimtrain/train/flat_layout.hpp"

namespace slimtrain::train {

/** @brief A gradient bucket's bytes: --bucket-mb (`option`, bytes) when set, else DDP's 25 MB on
 * a GPU, where NCCL takes a bucket in one call, and 4 MiB on a CPU (bench/train). */
std::size_t gradient_bucket_bytes(std::size_t option, bool gpu);

/** @brief Whether gradients are all-reduced during backward, and why. */
struct OverlapChoice {
  bool on = false;
  std::string reason;
};

/** @brief How gradient buckets travel: float32 as they are, or rounded to bfloat16. */
enum class GradCompression { none, bf16 };

/** @brief "none" or "bf16"; ConfigError naming --grad-compression otherwise. */
GradCompression parse_grad_compression(const std::string& name);
/** @brief What a bucket travels as: "fp32" or "bf16". */
const char* to_string(GradCompression c);

/**
 * @brief --overlap auto. On GPU, buckets start from backward's hooks and NCCL overlaps with the
 * rest of backward. With --shard gradients too, on any device: that is what frees each bucket
 * during backward. Otherwise off on CPU, where the MPI plane's polling communication thread takes
 * a core from backward (forcing it on with a 4-bucket mlp on a 2-core machine was 0.74-0.93x as
 * fast).
 */
OverlapChoice choose_overlap(std::size_t buckets, bool gpu, ShardMode shard = ShardMode::none);

/**
 * @brief --overlap-gather (`option`: auto, on, off): with --shard optimizer or gradients whether
 * the updated weights are all-gathered during the next forward, with parameters whether the next
 * layer is gathered while one computes. auto: on with NCCL, where the gather runs beside the
 * compute; off on CPU, where its thread competes with forward for the core.
 */
OverlapChoice choose_gather_overlap(const std::string& option, bool gpu, ShardMode shard);

/**
 * @brief Whether built-in linear layers form their weight gradients in the buckets, a block of
 * rows at a time (grad_pieces.cpp), instead of autograd's whole product. On a CPU yes: the whole
 * never exists (memory), at the same speed. On a GPU no: 512 small products for a 4096 x 4096
 * layer where one large one fills the device. `forced` (SLIMTRAIN_GRAD_SINK=on|off, a measuring
 * knob: bench/gpu's mlp-grad-sink row) overrides; anything else there is a ConfigError.
 */
OverlapChoice choose_grad_sink(bool gpu, const char* forced);

}  // namespace slimtrain::train
