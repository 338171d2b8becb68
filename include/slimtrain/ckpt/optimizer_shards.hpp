#pragma once
/**
 * @brief Optimizer state by element, independent of how a run was sharded: a list of ranges of
 * the logical element order (train/flat_layout.hpp) and, per kind of state ("exp_avg",
 * "exp_avg_sq", "momentum_buffer"), one float32 tensor holding those ranges end to end.
 *
 * Every rank of a sharded run writes its own as a file of the checkpoint; an unsharded run writes
 * one covering everything. A resuming rank reads the files whose ranges meet the ones it needs
 * now and copies element runs across (plan_copies): any world size and --shard mode resumes any
 * other, with no conversion step.
 */
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace slimtrain::files {
class DurableFile;
}

namespace slimtrain::ckpt {

/** @brief A run of the logical element order. */
struct ElementRange {
  std::int64_t start = 0;
  std::int64_t length = 0;
};

struct FlatOptimizerState {
  std::string optimizer;  ///< "sgd" or "adamw"
  std::int64_t step = 0;  ///< AdamW's step count (the same for every element)
  std::vector<ElementRange> ranges;
  std::map<std::string, torch::Tensor> tensors;  ///< CPU float32, sum of range lengths each
  std::int64_t elements() const;
};

/** @brief The checkpoint file of rank `rank`'s optimizer state: "optimizer-rank-00003.bin". */
std::string shard_file_name(int rank);

/** @brief A rank's pieces of the trained weights in the same format ("weights-rank-00003.bin",
 * its one kind "weights"): --shard parameters' checkpoints stage them, the writer assembles
 * tensors.bin from them and keeps none. */
std::string weights_file_name(int rank);

/**
 * @brief Writes one shard file to `out` straight from the tensors (a header, then the data):
 * nothing of the size of the state is made on the way.
 */
void write_shard(files::DurableFile& out, const FlatOptimizerState& state);
/**
 * @brief Reads a shard file into fresh tensors; also the torch archives written before this
 * format. DataError naming `file` when it is not a shard or does not add up.
 */
FlatOptimizerState read_shard(const std::string& file);

/** @brief Copy `length` elements from offset `from` of the source to offset `to` of the target. */
struct ElementCopy {
  std::int64_t from = 0;
  std::int64_t to = 0;
  std::int64_t length = 0;
  bool operator==(const ElementCopy& o) const {
    return from == o.from && to == o.to && length == o.length;
  }
};

/**
 * @brief The copies that bring every element of `target`'s ranges found in `source`'s ranges
 * (each list laid end to end in its buffer) to its place. Pure.
 */
std::vector<ElementCopy> plan_copies(const std::vector<ElementRange>& source,
                                     const std::vector<ElementRange>& target);

/** @brief Whether any range of `a` meets one of `b`. */
bool overlaps(const std::vector<ElementRange>& a, const std::vector<ElementRange>& b);

/**
 * @brief Copies what `source` holds of `target`'s ranges into `target` (whose tensors are made,
 * zero, for each kind the source has); returns the elements copied.
 */
std::int64_t fill_from(FlatOptimizerState& target, const FlatOptimizerState& source);

/** @brief What fill_from_file took from a file. */
struct FilledFrom {
  std::int64_t elements = 0;  ///< of target's ranges
  bool has_state = false;     ///< false: written before the first update
};

/**
 * @brief fill_from with a shard file as the source, reading only the element runs `target` needs
 * (a rank resuming from an unsharded checkpoint never holds more than its own shard).
 */
FilledFrom fill_from_file(FlatOptimizerState& target, const std::string& file);

}  // namespace slimtrain::ckpt
