// The memory plan's arithmetic (memory_plan.hpp): bytes a parameter costs in each --shard mode,
// the activation estimate against Korthikanti et al.'s closed form, and what a refusal names.
#include <gtest/gtest.h>

#include "slimtrain/train/memory_plan.hpp"

namespace slimtrain::train {
namespace {

ModelSize billion() {
  ModelSize m;
  m.parameters = m.trainable = 1'000'000'000;
  return m;
}

PlanSettings adamw(int world, ShardMode shard) {
  PlanSettings p;
  p.world = world;
  p.shard = shard;
  p.optimizer = "adamw";
  p.bucket_bytes = 4u << 20;
  return p;
}

TEST(MemoryPlan, SixteenBytesAParameterUnsharded) {
  const MemoryPlan plan = plan_memory(billion(), adamw(4, ShardMode::none));
  EXPECT_EQ(plan.weights, 4'000'000'000u);
  EXPECT_EQ(plan.gradients, 4'000'000'000u);
  EXPECT_EQ(plan.optimizer, 8'000'000'000u);
  EXPECT_FALSE(plan.activations_estimated);
  EXPECT_EQ(plan.total(), 16'000'000'000u);
}

TEST(MemoryPlan, OptimizerShardDividesOnlyTheState) {
  const MemoryPlan plan = plan_memory(billion(), adamw(4, ShardMode::optimizer));
  EXPECT_EQ(plan.weights, 4'000'000'000u);
  EXPECT_EQ(plan.gradients, 4'000'000'000u);
  EXPECT_EQ(plan.optimizer, 2'000'000'000u);
}

TEST(MemoryPlan, GradientShardKeepsTwoBucketsInFlight) {
  const MemoryPlan plan = plan_memory(billion(), adamw(4, ShardMode::gradients));
  // 4 + 4/4 + 8/4 bytes a parameter, and two 4 MiB buckets backward fills before they leave.
  EXPECT_EQ(plan.gradients, 1'000'000'000u + 2 * (4u << 20));
  EXPECT_EQ(plan.optimizer, 2'000'000'000u);
  PlanSettings waiting = adamw(4, ShardMode::gradients);
  waiting.overlap = false;  // every gradient exists before the first bucket leaves
  EXPECT_EQ(plan_memory(billion(), waiting).gradients, std::uint64_t{5'000'000'000});
}

TEST(MemoryPlan, ParameterShardHoldsItsPieceAndTheLayersGathered) {
  ModelSize m = billion();
  m.largest_group = 10'000'000;  // 40 MB gathered at once
  m.largest = 5'000'000;
  const MemoryPlan plan = plan_memory(m, adamw(4, ShardMode::parameters));
  // 4/4 bytes a parameter of weights, the group and a 4 MiB bucket at each end.
  EXPECT_EQ(plan.weights, 1'000'000'000u + 40'000'000u + 2 * (4u << 20));
  EXPECT_EQ(plan.gradients, 1'000'000'000u + 2 * 20'000'000u);  // as --shard gradients
  EXPECT_EQ(plan.optimizer, 2'000'000'000u);
  // Gradients made in pieces (the CPU's grad sink): only the largest tensor's is ever whole.
  PlanSettings pieces = adamw(4, ShardMode::parameters);
  pieces.gradients_in_pieces = true;
  EXPECT_EQ(plan_memory(m, pieces).gradients, 1'000'000'000u + 20'000'000u);
  EXPECT_EQ(plan_memory(m, pieces).weights, plan.weights);
  pieces.shard = ShardMode::gradients;  // whose buckets wait in index order: two in flight
  EXPECT_EQ(plan_memory(m, pieces).gradients, 1'000'000'000u + 2 * 20'000'000u);
  // --grad-accum: the earlier micro-batches' gradients add up whole before any leaves.
  pieces.grad_accum = 4;
  EXPECT_EQ(plan_memory(m, pieces).gradients, std::uint64_t{5'000'000'000});
  PlanSettings ahead = adamw(4, ShardMode::parameters);
  ahead.gather_ahead = true;  // the next group too
  EXPECT_EQ(plan_memory(m, ahead).weights, 1'000'000'000u + 80'000'000u + 2 * (4u << 20));
  // A model gathered whole holds every weight while a step runs.
  m.largest_group = 0;
  EXPECT_EQ(plan_memory(m, adamw(4, ShardMode::parameters)).weights, 5'000'000'000u);
  // The refusal names --shard parameters where it is what fits, or the world size it needs.
  m.largest_group = 10'000'000;
  MemoryBudget budget;
  budget.bytes = 5'000'000'000u;
  budget.source = "--memory-per-rank";
  const std::string why = refuse_unless_fits(m, adamw(4, ShardMode::gradients), budget);
  EXPECT_NE(why.find("--shard parameters needs 4.09 GB"), std::string::npos) << why;
  const std::string more = refuse_unless_fits(m, adamw(2, ShardMode::gradients), budget);
  EXPECT_NE(more.find("no --shard mode fits at 2 ranks: --shard parameters needs 4.09 GB at 4"),
            std::string::npos)
      << more;
}

TEST(MemoryPlan, ATensorLargerThanABucketIsABucketOfItsOwn) {
  ModelSize m = billion();
  m.largest = 100'000'000;  // an embedding of 400 MB: its gradient is one bucket
  const MemoryPlan plan = plan_memory(m, adamw(4, ShardMode::gradients));
  EXPECT_EQ(plan.gradients, 1'000'000'000u + 2 * 400'000'000u);
}

TEST(MemoryPlan, OptimizerStateFollowsTheOptimizer) {
  PlanSettings sgd = adamw(1, ShardMode::none);
  sgd.optimizer = "sgd";
  EXPECT_EQ(plan_memory(billion(), sgd).optimizer, 4'000'000'000u);  // momentum
  sgd.momentum = 0;
  EXPECT_EQ(plan_memory(billion(), sgd).optimizer, 0u);
}

TEST(MemoryPlan, FrozenWeightsCostOnlyTheirValues) {
  ModelSize m = billion();
  m.trainable = 250'000'000;
  const MemoryPlan plan = plan_memory(m, adamw(1, ShardMode::none));
  EXPECT_EQ(plan.weights, 4'000'000'000u);
  EXPECT_EQ(plan.gradients, 1'000'000'000u);
  EXPECT_EQ(plan.optimizer, 2'000'000'000u);
}

TEST(MemoryPlan, Bf16AddsAutocastCopiesAndHalvesTheWire) {
  PlanSettings p = adamw(1, ShardMode::none);
  p.bf16 = true;
  p.bf16_wire = true;
  const MemoryPlan plan = plan_memory(billion(), p);
  EXPECT_EQ(plan.weights, 6'000'000'000u);
  EXPECT_EQ(plan.gradients, 6'000'000'000u);  // the fp32 buckets and their bf16 wire copies
}

ModelSize encoder(std::int64_t tokens) {
  ModelSize m = billion();
  m.layers = 3;
  m.hidden = 1024;
  m.heads = 16;
  m.ffn = 4096;
  m.tokens = tokens;
  return m;
}

TEST(MemoryPlan, ActivationsAreKorthikantisIn16Bits) {
  PlanSettings p = adamw(1, ShardMode::none);
  p.bf16 = true;
  p.batch = 2;
  const double s = 512, h = 1024, a = 16, b = 2;
  // (layers + 1) x (34sbh + 5as^2b): table 2's "no parallelism" row, and the embeddings' output.
  const double expected = 4 * (34 * s * b * h + 5 * a * s * s * b) + 4 * s * h * b;
  const MemoryPlan plan = plan_memory(encoder(512), p);
  EXPECT_TRUE(plan.activations_estimated);
  EXPECT_NEAR(static_cast<double>(plan.activations), expected, 1.0);
  p.fused_attention = true;  // no s^2 scores kept
  EXPECT_NEAR(static_cast<double>(plan_memory(encoder(512), p).activations),
              4 * 34 * s * b * h + 4 * s * h * b, 1.0);
  p.bf16 = false;  // fp32 keeps every tensor in twice the bytes
  EXPECT_NEAR(static_cast<double>(plan_memory(encoder(512), p).activations),
              2 * 4 * 34 * s * b * h + 4 * s * h * b, 1.0);
}

// --activation-checkpointing layers: each layer keeps its input (2sbh in 16 bits); backward holds
// one layer's activations, made again, and its working set.
TEST(MemoryPlan, RecomputedLayersKeepTheirInputsAndOneLayer) {
  PlanSettings p = adamw(1, ShardMode::none);
  p.bf16 = true;
  p.fused_attention = true;
  p.batch = 2;
  p.recompute_layers = true;
  const double s = 512, h = 1024, b = 2;
  EXPECT_NEAR(static_cast<double>(plan_memory(encoder(512), p).activations),
              3 * 2 * s * h * b + 2 * 34 * s * b * h + 4 * s * h * b, 1.0);
  p.recompute_layers = false;
  EXPECT_NEAR(static_cast<double>(plan_memory(encoder(512), p).activations),
              4 * 34 * s * b * h + 4 * s * h * b, 1.0);
}

TEST(MemoryPlan, GatedFeedForwardKeepsFourProducts) {
  PlanSettings p = adamw(1, ShardMode::none);
  p.bf16 = true;
  p.fused_attention = true;
  ModelSize m = encoder(100);
  m.gated_ffn = true;
  m.ffn = 3000;
  const double s = 100, h = 1024, f = 3000;
  EXPECT_NEAR(static_cast<double>(plan_memory(m, p).activations),
              4 * (11 * s * h + 4 * s * h + 2 * s * h + 8 * s * f) + 4 * s * h, 1.0);
}

MemoryBudget budget(double gb) {
  MemoryBudget b;
  b.bytes = static_cast<std::uint64_t>(gb * 1e9);
  b.source = "--memory-per-rank";
  return b;
}

TEST(MemoryPlan, FitsOrNamesTheSmallestShardThatDoes) {
  const ModelSize m = billion();
  EXPECT_EQ(refuse_unless_fits(m, adamw(4, ShardMode::none), budget(16.5)), "");
  EXPECT_EQ(refuse_unless_fits(m, adamw(4, ShardMode::none), MemoryBudget{}), "");  // unknown
  const std::string optimizer = refuse_unless_fits(m, adamw(4, ShardMode::none), budget(11));
  EXPECT_NE(optimizer.find("needs 16.00 GB per rank with --shard none"), std::string::npos)
      << optimizer;
  EXPECT_NE(optimizer.find("rank 0's 11.00 GB (--memory-per-rank)"), std::string::npos)
      << optimizer;
  EXPECT_NE(optimizer.find("--shard optimizer needs 10.00 GB"), std::string::npos) << optimizer;
  const std::string gradients = refuse_unless_fits(m, adamw(4, ShardMode::none), budget(8));
  EXPECT_NE(gradients.find("--shard gradients needs 7.01 GB"), std::string::npos) << gradients;
}

TEST(MemoryPlan, NamesTheWorldSizeOrTheFloor) {
  const ModelSize m = billion();
  const std::string more = refuse_unless_fits(m, adamw(2, ShardMode::gradients), budget(5.5));
  // 4 + 12/8 bytes a parameter and two buckets is just over 5.5 GB at 8 ranks.
  EXPECT_NE(more.find("no --shard mode fits at 2 ranks: --shard gradients needs 4.76 GB at 16 "
                      "ranks"),
            std::string::npos)
      << more;
  const std::string floor = refuse_unless_fits(m, adamw(2, ShardMode::gradients), budget(3.9));
  EXPECT_NE(floor.find("at any world size it needs at least 4.01 GB (weights 4.00 GB)"),
            std::string::npos)
      << floor;
}

}  // namespace
}  // namespace slimtrain::train
