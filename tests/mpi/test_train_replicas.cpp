// Gradient sync keeps replicas identical: each rank trains on its own data, the bucketed (and
// chunked) all-reduce averages the gradients, and after N optimiser steps every rank holds the
// same parameters bit for bit, with overlap on and off (which must also agree with each other),
// and with bf16 compression (half the bytes, the average within bf16 rounding of float32's).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "mpi_runtime.hpp"
#include "replica_runs.hpp"
#include "replicas.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/layer_gate.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace sm = slimtrain::model;
namespace st = slimtrain::train;

namespace {

using slimtrain_test::Case;
using slimtrain_test::flatten;
using slimtrain_test::rt;
using slimtrain_test::RunResult;
using slimtrain_test::same_on_every_rank;
using slimtrain_test::train_replicas;

class ReplicasTest : public ::testing::TestWithParam<Case> {};

TEST_P(ReplicasTest, IdenticalAfterStepsWithOverlapOnAndOff) {
  const Case c = GetParam();
  const int steps = 6;
  const RunResult on = train_replicas(c, true, steps);
  const RunResult off = train_replicas(c, false, steps);

  EXPECT_GE(on.buckets, 3u) << "the model should span several buckets";
  EXPECT_EQ(on.buckets, off.buckets);
  EXPECT_TRUE(same_on_every_rank(on.initial)) << "initial weights not broadcast";
  EXPECT_NE(on.initial, on.final) << "training did not change the parameters";
  if (rt().size() > 1) {
    EXPECT_TRUE(on.local_grads_differed) << "ranks saw the same data: the test proves nothing";
  }
  EXPECT_TRUE(same_on_every_rank(on.final)) << "replicas diverged with overlap on";
  EXPECT_TRUE(same_on_every_rank(off.final)) << "replicas diverged with overlap off";
  EXPECT_EQ(std::memcmp(on.final.data(), off.final.data(), on.final.size() * sizeof(float)), 0)
      << "overlap on and off reduced different values";
}

TEST_P(ReplicasTest, Bf16CompressionHalvesTheBytes) {
  const Case c = GetParam();
  const int steps = 4;
  const RunResult fp32 = train_replicas(c, false, steps);
  const RunResult bf16 = train_replicas(c, false, steps, st::GradCompression::bf16);
  const RunResult bf16_on = train_replicas(c, true, steps, st::GradCompression::bf16);

  EXPECT_EQ(bf16.grad_bytes * 2, fp32.grad_bytes) << "bf16 should move half the bytes";
  EXPECT_TRUE(same_on_every_rank(bf16.final)) << "replicas diverged with bf16 compression";
  EXPECT_EQ(std::memcmp(bf16.final.data(), bf16_on.final.data(), bf16.final.size() * 4), 0)
      << "overlap on and off reduced different values under compression";
  if (rt().size() > 1) {
    // Rounding must have happened (else the wire was not bf16) and stayed small.
    EXPECT_NE(bf16.final, fp32.final) << "bf16 and fp32 runs are identical: nothing was rounded";
    double largest = 0;
    for (std::size_t i = 0; i < fp32.final.size(); ++i)
      largest = std::max(largest, static_cast<double>(std::abs(fp32.final[i] - bf16.final[i])));
    EXPECT_LT(largest, 0.02) << "bf16 compression moved a weight far from the fp32 run";
  }
}

// --shard optimizer and gradients (ZeRO-1, 2) end where unsharded training ends: bit for bit at
// np 2 (a sum of two floats does not depend on the order), within float rounding of a different
// summation order beyond, and every rank holds the same weights after the all-gather.
TEST_P(ReplicasTest, ShardedStepsEndWhereUnshardedOnesDo) {
  const Case c = GetParam();
  const int steps = 5;
  const RunResult none = train_replicas(c, false, steps);
  for (const st::ShardMode shard : {st::ShardMode::optimizer, st::ShardMode::gradients}) {
    // Overlap on: gradients reduced during backward and weights gathered during forward.
    for (const bool overlap : {false, true}) {
      const RunResult sharded =
          train_replicas(c, overlap, steps, st::GradCompression::none, shard, overlap);
      const std::string what =
          std::string("--shard ") + st::to_string(shard) +
          (overlap ? " with overlap (backward and forward)" : " without overlap");
      EXPECT_TRUE(same_on_every_rank(sharded.final)) << what << ": replicas diverged";
      ASSERT_EQ(sharded.final.size(), none.final.size());
      if (rt().size() <= 2) {
        EXPECT_EQ(std::memcmp(sharded.final.data(), none.final.data(), none.final.size() * 4), 0)
            << what << " is not bit-identical to --shard none";
        continue;
      }
      double worst = 0;
      for (std::size_t i = 0; i < none.final.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(sharded.final[i]) - none.final[i]) /
                                    (1e-3 + std::abs(static_cast<double>(none.final[i]))));
      EXPECT_LT(worst, 1e-5) << what << " moved a weight from --shard none's";
    }
  }
}

// --shard parameters (ZeRO-3) ends where --shard gradients ends: the same reduce-scatter and the
// same optimizer on the same pieces, each layer's weights gathered before it runs in forward and
// again in backward (the layer before freed by then). Bit for bit at np 2, within rounding
// beyond; during the steps a rank never held every layer's weights at once.
TEST_P(ReplicasTest, ParameterShardsTrainAsGradientShardsDo) {
  const Case c = GetParam();
  const int steps = 5;
  for (const bool sink : {false, true}) {
    const RunResult gradients = train_replicas(c, true, steps, st::GradCompression::none,
                                               st::ShardMode::gradients, false, sink);
    for (const bool prefetch : {false, true}) {
      // overlap: gradients reduced during backward, the next layer gathered while one computes.
      const RunResult parameters = train_replicas(c, prefetch, steps, st::GradCompression::none,
                                                  st::ShardMode::parameters, false, sink);
      const std::string what =
          std::string(sink ? "with the gradient sink" : "with autograd's gradients") +
          (prefetch ? ", prefetching" : ", a layer at a time");
      EXPECT_TRUE(same_on_every_rank(parameters.final)) << what << ": replicas diverged";
      ASSERT_EQ(parameters.final.size(), gradients.final.size());
      EXPECT_NE(parameters.initial, parameters.final) << what << ": training changed nothing";
      if (rt().size() <= 2) {
        EXPECT_EQ(parameters.final, gradients.final) << what << ": not bit-identical";
      } else {
        double worst = 0;
        for (std::size_t i = 0; i < gradients.final.size(); ++i)
          worst = std::max(worst,
                           std::abs(static_cast<double>(parameters.final[i]) - gradients.final[i]) /
                               (1e-3 + std::abs(static_cast<double>(gradients.final[i]))));
        EXPECT_LT(worst, 1e-5) << what << " moved a weight from --shard gradients'";
      }
      EXPECT_GE(parameters.segments, 3u) << what << ": the model's layers were not gated";
    }
  }
}

// The gradient buckets may start in any order the ranks share (LayerGate's reverse of first use,
// say): each bucket's sum is the same whenever it starts, so the weights are bit for bit those of
// index order. An order that is no permutation of the buckets is refused.
TEST(LaunchOrder, AnySharedOrderTrainsAsIndexOrderDoes) {
  const Case c{"mlp", 4 << 10};
  for (const st::ShardMode shard : {st::ShardMode::none, st::ShardMode::gradients}) {
    for (const bool sink : {false, true}) {
      const RunResult index =
          train_replicas(c, true, 3, st::GradCompression::none, shard, false, sink);
      const RunResult reversed =
          train_replicas(c, true, 3, st::GradCompression::none, shard, false, sink, true);
      const std::string what = std::string("--shard ") + st::to_string(shard) +
                               (sink ? " with the gradient sink" : " with autograd's gradients");
      EXPECT_TRUE(same_on_every_rank(reversed.final)) << what << ": replicas diverged";
      EXPECT_EQ(reversed.final, index.final) << what << ": the launch order changed the weights";
      EXPECT_GT(index.buckets, 2u) << what;
      // The order is honoured: a weight goes out in pieces only when its bucket is next, which in
      // the reverse of backward's order only the first layer's is.
      if (shard == st::ShardMode::gradients && sink) {
        EXPECT_LT(reversed.weights_in_pieces, index.weights_in_pieces) << what;
      }
    }
  }
  slimtrain::comm::CommConfig cc;
  cc.deadline.base_s = 30;
  auto plane = slimtrain::comm::make_data_plane(rt(), torch::Device(torch::kCPU), "data", cc);
  std::vector<torch::Tensor> params = {torch::zeros({600}), torch::zeros({600})};
  const st::FlatLayout layout({600, 600}, 1 << 10, 1);
  st::GradientSync sync(params, *plane, layout, st::ShardMode::none, false);
  ASSERT_EQ(sync.bucket_count(), 2u);
  EXPECT_THROW(sync.set_launch_order({0}), slimtrain::ConfigError);
  EXPECT_THROW(sync.set_launch_order({1, 1}), slimtrain::ConfigError);
  EXPECT_THROW(sync.set_launch_order({0, 2}), slimtrain::ConfigError);
  sync.set_launch_order({1, 0});
  EXPECT_EQ(sync.launch_order(), (std::vector<std::size_t>{1, 0}));
}

// A deep model's layers come and go: a rank holds the layer computing (and, prefetching, the
// next one, and the buckets they share), never most of the weights.
TEST(ParameterShards, ADeepModelHoldsAFewLayersAtATime) {
  const Case deep{"mlp", 4 << 10, 12};  // 12 layers of 64 x 64: a bucket each
  for (const bool prefetch : {false, true}) {
    const RunResult r =
        train_replicas(deep, prefetch, 3, st::GradCompression::none, st::ShardMode::parameters);
    EXPECT_TRUE(same_on_every_rank(r.final));
    EXPECT_GE(r.segments, 13u);
    EXPECT_GT(r.peak_held_bytes, 0u);
    // A layer (with its neighbours' shared buckets) is under a sixth of 13; two under a third.
    EXPECT_LT(r.peak_held_bytes * (prefetch ? 3 : 6), r.weight_bytes)
        << (prefetch ? "prefetching: " : "a layer at a time: ") << "held " << r.peak_held_bytes
        << " of " << r.weight_bytes << " bytes at once";
  }
}

// Built-in layers that give their weight gradients to the sync (model/grad_sink.hpp, the trainer's
// way): made in the buckets, or with --shard gradients in pieces reduce-scattered as backward makes
// them. Every mode makes them in the same blocks, so the modes stay bit-identical at np 2 (within
// rounding beyond), and all stay within rounding of autograd's whole products.
TEST_P(ReplicasTest, LayersGivingGradientsToTheSyncTrainAsAutogradDoes) {
  const Case c = GetParam();
  const int steps = 4;
  const RunResult autograd = train_replicas(c, false, steps);
  const RunResult none =
      train_replicas(c, false, steps, st::GradCompression::none, st::ShardMode::none, false, true);
  const auto within = [&](const RunResult& r, const RunResult& of, double tolerance) {
    double worst = 0;
    for (std::size_t i = 0; i < of.final.size() && i < r.final.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(r.final[i]) - of.final[i]) /
                                  (1e-3 + std::abs(static_cast<double>(of.final[i]))));
    return r.final.size() == of.final.size() && worst < tolerance;
  };
  EXPECT_TRUE(within(none, autograd, 1e-5)) << "the sink moved --shard none from autograd's";
  EXPECT_TRUE(same_on_every_rank(none.final));
  for (const st::ShardMode shard : {st::ShardMode::optimizer, st::ShardMode::gradients}) {
    for (const bool overlap : {false, true}) {
      const RunResult r =
          train_replicas(c, overlap, steps, st::GradCompression::none, shard, false, true);
      const std::string what =
          std::string("--shard ") + st::to_string(shard) + (overlap ? " with overlap" : " without");
      EXPECT_TRUE(same_on_every_rank(r.final)) << what << ": replicas diverged";
      if (rt().size() <= 2)
        EXPECT_EQ(r.final, none.final) << what << " is not bit-identical to --shard none";
      else
        EXPECT_TRUE(within(r, none, 1e-5)) << what << " moved a weight from --shard none's";
      // Only the mlp's layers give their gradients (the other built-ins leave them to autograd).
      const bool pieces =
          shard == st::ShardMode::gradients && overlap && c.model == std::string("mlp");
      EXPECT_EQ(r.weights_in_pieces > 0, pieces)
          << what << ": " << r.weights_in_pieces << " weights made in pieces";
    }
  }
  const RunResult bf16 = train_replicas(c, true, steps, st::GradCompression::bf16,
                                        st::ShardMode::gradients, false, true);
  EXPECT_TRUE(same_on_every_rank(bf16.final)) << "bf16 in pieces: replicas diverged";
  double largest = 0;  // as Bf16CompressionHalvesTheBytes bounds it
  for (std::size_t i = 0; i < none.final.size() && i < bf16.final.size(); ++i)
    largest = std::max(largest, static_cast<double>(std::abs(none.final[i] - bf16.final[i])));
  EXPECT_LT(largest, 0.02) << "bf16 in pieces moved a weight far from fp32's";
}

INSTANTIATE_TEST_SUITE_P(Models, ReplicasTest,
                         ::testing::Values(Case{"mlp", 4 << 10}, Case{"cnn-small", 32 << 10},
                                           Case{"vit-tiny", 16 << 10}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.model;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
