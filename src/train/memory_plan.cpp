#include "slimtrain/train/memory_plan.hpp"

#include <algorithm>
#include <cstdio>

namespace slimtrain::train {
namespace {

using u64 = std::uint64_t;

constexpr int kMostRanksNamed = 4096;  // a refusal suggests no larger world size

// Bytes one layer keeps for backward per sample, in 16 bits (Korthikanti et al. 2022 for a
// post-2020 transformer block, taken apart): attention 11sh (its input, Q, K and V, the context,
// a dropout mask) + 5as^2 (scores, softmax, dropout) where the kernel is not fused; the two norms
// 4sh; the feed-forward its input 2sh and 2sf for each of its stored products: 2 (the first
// product and its activation, plus a dropout mask sh) or 4 when gated (gate, up, activation,
// their product).
double layer_bytes_16(const ModelSize& m, bool fused) {
  const double s = static_cast<double>(m.tokens), h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn), a = static_cast<double>(m.heads);
  const double attention = 11 * s * h + (fused ? 0.0 : 5 * a * s * s);
  const double ffn = m.gated_ffn ? 2 * s * h + 8 * s * f : 3 * s * h + 4 * s * f;
  return attention + 4 * s * h + ffn;
}

u64 activation_bytes(const ModelSize& m, const PlanSettings& p) {
  if (m.layers <= 0 || m.tokens <= 0 || m.hidden <= 0) return 0;
  const double scale = p.bf16 ? 1.0 : 2.0;  // fp32 stores every tensor in 4 bytes
  const double per_sample = layer_bytes_16(m, p.fused_attention) * scale;
  // Every layer's, one more for backward's working set (the gradient of a layer's activations),
  // and the embeddings' output. With --activation-checkpointing layers each layer keeps its input
  // alone, and backward holds one layer's, made again, and its working set.
  const double input = 2.0 * static_cast<double>(m.tokens * m.hidden) * scale;
  const double layers = (p.recompute_layers ? static_cast<double>(m.layers) * input + 2 * per_sample
                                            : static_cast<double>(m.layers + 1) * per_sample) +
                        4.0 * static_cast<double>(m.tokens * m.hidden);
  return static_cast<u64>(layers * static_cast<double>(p.batch));
}

u64 share(u64 bytes, int world) {
  return (bytes + static_cast<u64>(world) - 1) / static_cast<u64>(world);
}

const char* mode_option(ShardMode mode) {
  return to_string(mode);
}

}  // namespace

std::string gigabytes(u64 bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

std::string MemoryPlan::describe() const {
  auto gb = [](u64 b) {
    char text[24];
    std::snprintf(text, sizeof text, "%.2f", static_cast<double>(b) / 1e9);
    return std::string(text);
  };
  std::string out = gigabytes(total()) + " per rank with --shard " + mode_option(shard) +
                    " (weights " + gb(weights) + ", gradients " + gb(gradients) + ", optimizer " +
                    gb(optimizer) + ", activations " +
                    (activations_estimated ? gb(activations) : std::string("not estimated"));
  if (process > 0) out += ", process " + gb(process);
  return out + ")";
}

MemoryPlan plan_memory(const ModelSize& m, const PlanSettings& p) {
  const u64 all = static_cast<u64>(std::max<std::int64_t>(m.parameters, 0));
  const u64 trainable = static_cast<u64>(std::max<std::int64_t>(m.trainable, 0));
  const int world = std::max(1, p.world);
  MemoryPlan plan;
  plan.shard = p.shard;
  const u64 frozen = (p.frozen_bf16 ? 2 : 4) * (all - std::min(all, trainable));
  // In bf16 a trained value costs 6 bytes either way: autocast's bf16 copy beside the float32
  // weight, or with --weights bf16 the bf16 weight beside its float32 master.
  plan.weights = frozen + 4 * trainable + (p.bf16 ? 2 * trainable : 0);
  if (p.shard == ShardMode::parameters) {
    // The trained weights' shard, and what is gathered at once: the largest group computing (and
    // the next one with --overlap-gather), and a bucket at each end (a model that does not gate
    // its layers holds its every weight while a step runs).
    const u64 group = 4 * static_cast<u64>(std::max<std::int64_t>(m.largest_group, 0));
    const u64 gathered =
        m.largest_group > 0
            ? std::min<u64>(4 * trainable, (p.gather_ahead ? 2 : 1) * group + 2 * p.bucket_bytes)
            : 4 * trainable;
    plan.weights = frozen + share(4 * trainable, world) + gathered + (p.bf16 ? 2 * trainable : 0);
  }
  const u64 gradients = trainable * (p.bf16_wire ? 6 : 4);
  if (p.shard == ShardMode::gradients || p.shard == ShardMode::parameters) {
    // The rank's shard, and what backward fills before it is reduce-scattered: about two buckets
    // when they start during backward, every gradient when they wait for its end (--overlap off)
    // or add up over micro-batches (--grad-accum).
    const u64 largest =
        std::max<u64>(p.bucket_bytes, 4 * static_cast<u64>(std::max<std::int64_t>(m.largest, 0)));
    const u64 bucket = largest * (p.bf16_wire ? 6 : 4) / 4;
    // In pieces, a gated layer's weight gradient never exists whole: the embeddings' alone is
    // made whole, at the end of backward, when nothing else is in flight.
    const bool pieces =
        p.gradients_in_pieces && p.shard == ShardMode::parameters && m.largest_group > 0;
    const bool whole = !p.overlap || p.grad_accum > 1;
    const u64 in_flight = whole ? gradients : std::min(gradients, (pieces ? 1 : 2) * bucket);
    plan.gradients = share(gradients, world) + in_flight;
  } else {
    plan.gradients = gradients;
  }
  u64 state = 0;
  if (p.optimizer == "adamw" || p.optimizer == "adam")
    state = 8 * trainable;
  else if (p.momentum != 0)
    state = 4 * trainable;
  plan.optimizer = p.shard == ShardMode::none ? state : share(state, world);
  plan.activations = activation_bytes(m, p);
  plan.activations_estimated = m.layers > 0 && m.tokens > 0;
  plan.process = p.process_bytes;
  return plan;
}

std::string refuse_unless_fits(const ModelSize& m, const PlanSettings& p, const MemoryBudget& b) {
  const MemoryPlan plan = plan_memory(m, p);
  if (b.bytes == 0 || plan.total() <= b.bytes) return "";
  std::string out = "the memory plan needs " + plan.describe() + ", more than rank " +
                    std::to_string(b.rank) + "'s " + gigabytes(b.bytes) + " (" + b.source + ")";
  for (ShardMode mode : {ShardMode::optimizer, ShardMode::gradients, ShardMode::parameters}) {
    if (mode <= p.shard || (p.lora && mode == ShardMode::parameters)) continue;
    PlanSettings other = p;
    other.shard = mode;
    const MemoryPlan fits = plan_memory(m, other);
    if (fits.total() <= b.bytes)
      return out + "; --shard " + mode_option(mode) + " needs " + gigabytes(fits.total());
  }
  // No mode fits at this world size: more ranks shrink the shards (and, with parameters, the
  // weights a rank keeps; not the layers it gathers, nor a model gathered whole).
  const auto smallest = [&](int world) {
    PlanSettings at = p;
    at.world = world;
    at.shard = ShardMode::gradients;
    const MemoryPlan gradients = plan_memory(m, at);
    if (p.lora) return gradients;
    at.shard = ShardMode::parameters;
    const MemoryPlan parameters = plan_memory(m, at);
    return parameters.total() < gradients.total() ? parameters : gradients;
  };
  for (int world = 2 * std::max(1, p.world); world <= kMostRanksNamed; world *= 2)
    if (const MemoryPlan fits = smallest(world); fits.total() <= b.bytes)
      return out + "; no --shard mode fits at " + std::to_string(p.world) + " ranks: --shard " +
             mode_option(fits.shard) + " needs " + gigabytes(fits.total()) + " at " +
             std::to_string(world) + " ranks";
  const MemoryPlan least = smallest(1 << 30);
  out += "; no --shard mode fits: with --shard " + std::string(mode_option(least.shard)) +
         (least.shard == ShardMode::gradients
              ? " every rank still holds every weight"
              : " every rank still holds the layers it gathers and its frozen weights") +
         ", so at any world size it needs at least " + gigabytes(least.total()) + " (weights " +
         gigabytes(least.weights) + ")";
  if (plan.activations_estimated)
    out += "; a smaller --batch-size or --max-length shrinks the activations (" +
           gigabytes(plan.activations) + ")";
  return out + "; --memory-per-rank sets the budget where the estimate is wrong";
}

}  // namespace slimtrain::train
