#pragma once
/**
 * @brief The order a rank reads its training rows in, per epoch: pure functions of (seed, epoch,
 * rank) and the file's shape, the same on every rank and after a resume. No files, no threads:
 * train_loader.hpp reads what these say, and tests check them directly.
 *
 * memory mode: a full permutation of the rows; rank r takes positions [r * n/W, (r+1) * n/W).
 * stream mode: the permutation is of blocks (the file's chunks, read whole), never of rows, so
 * the order costs memory by the block and not by the row: the blocks' permuted concatenation is
 * cut the same way, and each rank shuffles its rows within windows of several blocks.
 */
#include <cstdint>
#include <functional>
#include <vector>

namespace slimtrain::data {

/** @brief Rows [begin, begin + count) of a split, read as one hyperslab. */
struct RowRun {
  std::int64_t begin, count;
};

/** @brief The shuffle within stream window `window`: its own stream per (seed, epoch, rank). */
std::vector<std::int64_t> window_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch,
                                             int rank, std::int64_t window);

/** @brief Memory mode: this rank's `per_rank` rows of the epoch's permutation of `rows`. */
std::vector<std::int64_t> memory_epoch_rows(std::int64_t rows, std::int64_t per_rank, int rank,
                                            std::uint64_t seed, std::int64_t epoch);

/**
 * @brief --group-by-length: this rank's rows of the epoch's permutation `order` (of `per_rank` *
 * `world` rows), sorted by `length` longest first within windows of `window_batches` global
 * batches, the full global batches of a window in an order drawn from (seed, epoch), this rank a
 * slice of each (HuggingFace's group_by_length, with ranks that step together padding alike).
 */
std::vector<std::int64_t> group_by_length(const std::vector<std::int64_t>& order,
                                          const std::function<std::int64_t(std::int64_t)>& length,
                                          std::int64_t batch, std::int64_t window_batches,
                                          std::int64_t per_rank, int rank, int world,
                                          std::uint64_t seed, std::int64_t epoch);

/**
 * @brief Stream mode's order for one rank and epoch. It holds the permutation of the blocks (8
 * bytes a block) and makes each window's runs and shuffle when asked: memory by the block and
 * the window, whatever the number of rows.
 */
class StreamOrder {
 public:
  StreamOrder(std::int64_t rows, std::int64_t block_rows, std::int64_t per_rank, int rank,
              int shuffle_blocks, std::uint64_t seed, std::int64_t epoch);

  /** @brief Rows per window (the last may be shorter). */
  std::int64_t window_rows() const { return window_; }
  std::int64_t windows() const { return (per_rank_ + window_ - 1) / window_; }
  /** @brief Rows of window `w`. */
  std::int64_t window_length(std::int64_t w) const;
  /** @brief The file's rows that make window `w`, in the blocks' permuted order. */
  std::vector<RowRun> window_runs(std::int64_t w) const;
  /** @brief Position k of window `w` takes the window's row p[k] (counted along its runs). */
  std::vector<std::int64_t> window_order(std::int64_t w) const;
  /** @brief Every row of the epoch in the order read (tests: O(rows) memory). */
  std::vector<std::int64_t> rows() const;

 private:
  /** @brief The block holding position `position` of the permuted concatenation, and where. */
  void locate(std::int64_t position, std::int64_t& index, std::int64_t& offset) const;
  std::int64_t block_size(std::int64_t index) const;

  std::int64_t rows_, block_rows_, per_rank_, window_;
  int rank_;
  std::uint64_t seed_;
  std::int64_t epoch_;
  std::vector<std::int64_t> blocks_;  ///< permuted index -> source block
  std::int64_t short_at_ = -1;        ///< permuted index of the short last block (-1: none)
};

}  // namespace slimtrain::data
