// mpi_train_replicas' run (replica_runs.hpp).
#include "replica_runs.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "mpi_runtime.hpp"
#include "replicas.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/layer_gate.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/sharded_params.hpp"

namespace slimtrain_test {

namespace sm = slimtrain::model;
namespace st = slimtrain::train;

RunResult train_replicas(const Case& c, bool overlap, int steps, st::GradCompression compression,
                         st::ShardMode shard, bool gather_during_forward, bool sink,
                         bool reverse_launch) {
  sm::ModelSpec spec;
  spec.name = c.model;
  spec.input_shape = {1, 8, 8};
  spec.num_classes = 5;
  spec.mlp_widths = {64, 32};
  if (c.depth > 0) spec.mlp_widths.assign(c.depth, 64);
  spec.vit_patch = 4;
  // Different initial weights per rank: only the broadcast from rank 0 makes them equal.
  torch::manual_seed(static_cast<std::uint64_t>(11 + rt().rank()));
  auto model = sm::make_model(spec);

  slimtrain::comm::CommConfig cc;
  cc.chunk_bytes = 8 << 10;  // buckets span several chunks too
  cc.deadline.base_s = 30;
  auto plane = slimtrain::comm::make_data_plane(rt(), torch::Device(torch::kCPU), "data", cc);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) plane->broadcast(p.detach(), 0);
  }
  RunResult result;
  result.initial = flatten(model->parameters());

  st::OptimConfig oc;
  oc.lr = 0.05;
  oc.momentum = 0.9;
  oc.weight_decay = 1e-3;
  std::vector<std::int64_t> numels;
  for (const auto& p : model->parameters()) numels.push_back(p.numel());
  const st::FlatLayout layout(numels, c.bucket_bytes,
                              shard == st::ShardMode::none ? 1 : rt().size());
  std::unique_ptr<st::ShardedParams> shards;
  const bool zero3 = shard == st::ShardMode::parameters;
  if (shard != st::ShardMode::none)
    shards = std::make_unique<st::ShardedParams>(model->parameters(), layout, rt().rank(),
                                                 zero3 ? plane.get() : nullptr);
  auto optimizer = st::make_optimizer(oc, shards ? shards->shard() : model->parameters());
  st::GradientSync sync(model->parameters(), *plane, layout,
                        zero3 ? st::ShardMode::gradients : shard, overlap, compression);
  // --shard parameters: each layer gathers its weights as it runs (the trainer's wiring).
  std::unique_ptr<st::LayerGate> gate;
  if (zero3) {
    gate = std::make_unique<st::LayerGate>(*shards, overlap);
    shards->reset_peak();  // the constructor held every weight once, before freeing them
    model->set_weight_gate([&gate](const std::vector<torch::Tensor>& weights,
                                   const torch::Tensor& x) { gate->before_layer(weights, x); });
  }
  if (shards) shards->attach_grads(sync.shard_grads());
  // --overlap-gather: forward waits for each layer's weights as it reaches them (the trainer's
  // wiring, session.cpp).
  if (gather_during_forward)
    model->set_weight_gate([&shards](const std::vector<torch::Tensor>& weights,
                                     const torch::Tensor&) { shards->await(weights); });
  // The trainer's wiring (session.cpp): built-in linear layers form their weight gradients in the
  // buckets, or in pieces reduce-scattered as they are made.
  if (sink) model->set_grad_sink(sync.sink());
  if (reverse_launch) {  // any order every rank agrees on sums alike
    std::vector<std::size_t> order(sync.bucket_count());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
    sync.set_launch_order(order);
  }
  const std::uint64_t bytes_before = plane->bytes_reduced();
  result.buckets = sync.bucket_count();
  EXPECT_EQ(result.buckets, st::GradientSync::count_buckets(model->parameters(), c.bucket_bytes));

  const double world = rt().size();
  for (int step = 0; step < steps; ++step) {
    // Each rank its own batch, as data parallelism gives it.
    torch::manual_seed(static_cast<std::uint64_t>(1000 * step + rt().rank()));
    const torch::Tensor x = torch::rand({16, 1, 8, 8});
    const torch::Tensor y = torch::randint(0, spec.num_classes, {16}, torch::kLong);
    sync.prepare();
    if (gate) gate->begin_forward();
    sm::Output out = model->forward(x, y);
    if (shards) shards->finish_in_flight();  // as the trainer: nothing in flight past forward
    // As the trainer: the first forward's order of first use, reversed, is the launch order.
    if (gate) gate->end_forward(sync);
    // This rank's own gradient, before backward starts any bucket: the expected average is the
    // float64 mean of those over the ranks.
    std::vector<float> local;
    if (zero3) {        // one backward per forward: a second would find the layers it freed
    } else if (sink) {  // autograd's own backward: the sink must see only the step's
      model->set_grad_sink(nullptr);
      local = flatten(torch::autograd::grad({model->forward(x, y).loss}, model->parameters()));
      model->set_grad_sink(sync.sink());
    } else {
      local = flatten(torch::autograd::grad({out.loss}, model->parameters(), {}, true));
    }
    out.loss.backward();
    if (shard != st::ShardMode::none) {
      sync.finish();
      result.weights_in_pieces = sync.weights_in_pieces();
      optimizer->step();
      if (zero3) {
        result.segments = gate->segments();
        shards->start_gather(*plane);  // frees the old weights: the next forward gathers
      } else if (gather_during_forward)
        shards->start_gather(*plane);
      else
        shards->gather(*plane);
      continue;
    }
    std::vector<torch::Tensor> grads;
    std::vector<const void*> where;  // gradients accumulate in the buckets (no second copy)
    for (const auto& p : model->parameters()) where.push_back(p.grad().data_ptr());
    if (step == 0) result.local_grads_differed = !same_on_every_rank(local);
    std::vector<double> expected(local.begin(), local.end());
    MPI_Allreduce(MPI_IN_PLACE, expected.data(), static_cast<int>(expected.size()), MPI_DOUBLE,
                  MPI_SUM, MPI_COMM_WORLD);
    // bf16 keeps 8 significant bits: each rank's value and each partial sum is rounded once
    // (error at most 2^-9 of the sum of magnitudes each; 2 x world roundings over world).
    std::vector<double> magnitude(local.size());
    for (std::size_t i = 0; i < local.size(); ++i) magnitude[i] = std::abs(local[i]);
    MPI_Allreduce(MPI_IN_PLACE, magnitude.data(), static_cast<int>(magnitude.size()), MPI_DOUBLE,
                  MPI_SUM, MPI_COMM_WORLD);

    sync.launch();
    sync.wait();
    grads.clear();
    std::size_t moved = 0, strided = 0;
    for (const auto& p : model->parameters()) {
      if (p.grad().data_ptr() != where[grads.size()]) ++moved;
      if (p.grad().strides() != p.strides()) ++strided;
      grads.push_back(p.grad());
    }
    EXPECT_EQ(moved, 0u) << "backward's gradients were not the buckets' (a copy) at step " << step;
    EXPECT_EQ(strided, 0u) << "gradients laid out unlike their parameters at step " << step;
    const std::vector<float> averaged = flatten(grads);
    EXPECT_EQ(averaged.size(), expected.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < averaged.size() && i < expected.size(); ++i) {
      const double want = expected[i] / world;
      const double tolerance = compression == st::GradCompression::none
                                   ? 1e-6 + 1e-5 * std::abs(want)
                                   : 1e-30 + std::ldexp(magnitude[i], -8);
      if (std::abs(averaged[i] - want) > tolerance) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << "gradients not the average over ranks at step " << step;
    EXPECT_TRUE(same_on_every_rank(averaged)) << "averaged gradients differ at step " << step;
    optimizer->step();
  }
  result.grad_bytes = plane->bytes_reduced() - bytes_before;
  if (zero3) {  // before the gather of them all below
    result.weight_bytes = shards->bytes();
    result.peak_held_bytes = shards->peak_held_bytes();
  }
  if (shards) shards->wait_gathered();
  result.final = flatten(model->parameters());
  return result;
}

}  // namespace slimtrain_test
