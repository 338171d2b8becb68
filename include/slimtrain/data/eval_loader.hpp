#pragma once
/**
 * @brief The evaluation reader: this rank's exact share of a split (eval_share), in file order,
 * so every sample is evaluated exactly once across ranks for any world size. Shares may differ
 * by one sample; there is no padding, and no per-batch collective is needed.
 */
#include <cstdint>
#include <memory>
#include <string>

#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/named_split.hpp"
#include "slimtrain/data/shard.hpp"
#include "slimtrain/data/split_reader.hpp"

namespace slimtrain::data {

class EvalLoader {
 public:
  /** @brief `info` with its mean/std known (ensure_normalisation). */
  EvalLoader(DatasetInfo info, const std::string& split, int rank, int world_size,
             std::int64_t batch_size);
  /** @brief The file's description read here; mean/std computed locally when it has none. */
  EvalLoader(const std::string& path, const std::string& split, int rank, int world_size,
             std::int64_t batch_size);
  std::int64_t local_count() const { return share_.end - share_.begin; }
  std::int64_t global_count() const { return global_; }
  /** @brief The first global row of this rank's share. */
  std::int64_t first_row() const { return share_.begin; }
  /** @brief The row the next batch starts at, and the end of this rank's share. */
  std::int64_t position() const { return position_; }
  std::int64_t share_end() const { return share_.end; }
  /** @brief What a batch too large for memory is told to do (refuse_batch's `remedy`). */
  void set_batch_remedy(const std::string& remedy) {
    if (named_) named_->set_batch_remedy(remedy);
  }
  void reset() { position_ = share_.begin; }
  bool next(Batch& out);
  const DatasetInfo& info() const { return info_; }

 private:
  DatasetInfo info_;
  std::unique_ptr<SplitReader> reader_;  // layout 1
  std::unique_ptr<NamedSplit> named_;    // layout 2: the split in memory
  Range share_{0, 0};
  std::int64_t global_ = 0, batch_size_ = 0, position_ = 0;
  std::vector<std::int64_t> x_shape_;
  std::vector<std::uint8_t> raw_;
};

}  // namespace slimtrain::data
