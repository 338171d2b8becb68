#pragma once
// mpi_train_replicas' run: a built-in model trained for some steps on every rank with its own
// batches, the trainer's wiring of the gradient sync, the shards, the layer gate and the sink.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "slimtrain/train/flat_layout.hpp"
#include "slimtrain/train/sync_choice.hpp"

namespace slimtrain_test {

struct Case {
  const char* model;
  std::size_t bucket_bytes;
  std::size_t depth = 0;  ///< mlp: that many hidden layers of 64 (0: 64, 32)
};

struct RunResult {
  std::vector<float> initial, final;
  std::size_t buckets = 0;
  std::uint64_t grad_bytes = 0;  // what the steps put on the data plane
  bool local_grads_differed = false;
  std::size_t weights_in_pieces = 0;  // the last step's (layers giving their gradients to sync)
  std::uint64_t weight_bytes = 0, peak_held_bytes = 0;  // --shard parameters: all, most held
  std::size_t segments = 0;                             // --shard parameters: layers gated
};

RunResult train_replicas(
    const Case& c, bool overlap, int steps,
    slimtrain::train::GradCompression compression = slimtrain::train::GradCompression::none,
    slimtrain::train::ShardMode shard = slimtrain::train::ShardMode::none,
    bool gather_during_forward = false, bool sink = false, bool reverse_launch = false);

}  // namespace slimtrain_test
