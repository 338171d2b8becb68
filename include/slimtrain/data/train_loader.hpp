#pragma once
/**
 * @brief The training reader: every epoch a global order from (seed, epoch), identical on all
 * ranks; rank r takes positions [r * n/W, (r+1) * n/W) of it, so slices are disjoint and every
 * rank runs the same number of steps. The n % W samples past the last full slice are dropped
 * for that epoch (a different set each epoch); the last batch of an epoch may be short.
 *
 * memory mode: the split is loaded once; the order is a full permutation of the samples.
 * stream mode: the order permutes chunk-aligned blocks (so reads stay sequential), a shuffle
 * buffer of several blocks mixes samples within this rank, and a prefetch thread reads and
 * converts ahead of the consumer (the orders: epoch_order.hpp). The memory mode makes its batches
 * (augmented when asked) on a prefetch thread too: gathering, augmenting and normalising cost the
 * step nothing while a core is free.
 */
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "slimtrain/core/fault_injection.hpp"
#include "slimtrain/data/augment.hpp"
#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/epoch_order.hpp"
#include "slimtrain/data/named_split.hpp"
#include "slimtrain/data/split_reader.hpp"

namespace slimtrain::data {

struct LoaderOptions {
  std::int64_t batch_size = 64;
  std::uint64_t seed = 0;
  /** @brief auto (memory when the split fits memory_budget_bytes), memory, or stream. */
  std::string mode = "auto";
  std::size_t memory_budget_bytes = 2ull << 30;
  int prefetch_batches = 4;
  /**
   * @brief Seconds next() waits for the prefetch thread's batch, and a restart for it to stop
   * (< 0: no limit). Past it the read is stalled (a hung file system): next() throws Error
   * naming the file, and the thread is abandoned to it (the trainer passes --io-timeout).
   */
  double wait_timeout_s = -1.0;
  /** @brief stream mode: blocks per shuffle buffer. */
  int shuffle_blocks = 8;
  /** @brief Off by default; applied on the prefetch thread. */
  AugmentOptions augment;
  /** @brief Normalised float32 (a CPU's step), or as stored in pinned memory (the GPU step). */
  BatchForm form;
  /**
   * @brief Layout 2 with a ragged input: each epoch's rows (all ranks') sorted by length within
   * windows of kGroupWindowBatches global batches, those batches in an order drawn from (seed,
   * epoch), each rank a slice of each: little padding, ranks that step together pad alike, and
   * the same order on a resume (HuggingFace's group_by_length).
   */
  bool group_by_length = false;
};

/** @brief Batches per window of --group-by-length. */
inline constexpr std::int64_t kGroupWindowBatches = 64;

class TrainLoader {
 public:
  /** @brief `info` with its mean/std known (ensure_normalisation). */
  TrainLoader(DatasetInfo info, const std::string& split, int rank, int world_size,
              const LoaderOptions& options);
  /** @brief The file's description read here; mean/std computed locally when it has none. */
  TrainLoader(const std::string& path, const std::string& split, int rank, int world_size,
              const LoaderOptions& options);
  ~TrainLoader();
  TrainLoader(const TrainLoader&) = delete;
  TrainLoader& operator=(const TrainLoader&) = delete;

  std::int64_t steps_per_epoch() const { return steps_; }
  /** @brief Samples this rank sees per epoch (n / world_size). */
  std::int64_t samples_per_epoch() const { return per_rank_; }
  /** @brief Starts `epoch`; skip_steps > 0 resumes mid-epoch at that batch. */
  void start_epoch(std::int64_t epoch, std::int64_t skip_steps = 0);
  /** @brief The next batch; false at the end of the epoch. */
  bool next(Batch& out);
  /** @brief Bytes of samples and labels held for the whole run (memory mode; 0 streaming). */
  std::size_t resident_bytes() const {
    if (named_) return named_->bytes();
    return all_x_ ? static_cast<std::size_t>(n_) * reader_->sample_bytes() +
                        all_y_.size() * sizeof(std::int64_t)
                  : 0;
  }
  /** @brief Layout 2: the split in memory (null for layout 1). */
  const NamedSplit* named() const { return named_.get(); }
  /** @brief "memory" or "stream", as chosen. */
  const std::string& mode() const { return mode_; }
  const DatasetInfo& info() const { return info_; }

  /** @brief The source rows this rank reads in `epoch`, in order (tests, benchmarks). */
  std::vector<std::int64_t> epoch_rows(std::int64_t epoch) const;

 private:
  /** @brief Stream mode's order of `epoch` for this rank. */
  StreamOrder stream_order(std::int64_t epoch) const;
  /**
   * @brief memory when the split fits --memory-budget-mb (or was asked for), else stream when its
   * blocks' order and window fit; else DataError: too large for any mode.
   */
  std::string choose_mode(const std::string& split) const;
  /** @brief Layout 2: checks the options and reads the split. */
  void open_named(const std::string& split);
  void stop_prefetch();
  void produce(std::int64_t epoch, std::int64_t start);
  void produce_from_memory(std::int64_t epoch, std::int64_t start);
  /** @brief Queues a batch for next(); false when the producer is being stopped. */
  bool hand_over(Batch batch);
  /** @brief Augments (when on) and normalises `count` raw samples of source rows `rows`. */
  Batch make_batch(std::uint8_t* raw, const std::int64_t* labels, const std::int64_t* rows,
                   std::int64_t count, std::int64_t epoch) const;

  DatasetInfo info_;
  std::string split_;
  int rank_, world_size_;
  LoaderOptions options_;
  std::string mode_;
  std::unique_ptr<SplitReader> reader_;  // layout 1
  std::unique_ptr<NamedSplit> named_;    // layout 2: always in memory
  std::unique_ptr<Augmenter> augmenter_;
  std::int64_t n_ = 0, per_rank_ = 0, steps_ = 0;
  std::vector<std::int64_t> x_shape_;

  // memory mode
  std::unique_ptr<std::uint8_t[]> all_x_;  // not zero-filled first: the read fills it
  std::vector<std::int64_t> all_y_;
  std::vector<std::int64_t> rows_;

  // the prefetch thread (both modes)
  std::thread producer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;
  bool producer_done_ = true;
  bool stop_ = false;
  std::exception_ptr producer_error_;
  // A producer that outlived wait_timeout_s: detached and never waited for again.
  bool abandoned_ = false;
  std::int64_t handed_ = 0;  ///< batches handed over in this loader's life (phase=read's step)
  FaultPlan fault_ = FaultPlan::from_env();
};

}  // namespace slimtrain::data
