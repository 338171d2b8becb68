#include "slimtrain/data/train_loader.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "slimtrain/core/detail/fixed.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/thread_name.hpp"
#include "slimtrain/data/epoch_order.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/data/shard.hpp"

namespace slimtrain::data {
TrainLoader::TrainLoader(const std::string& path, const std::string& split, int rank,
                         int world_size, const LoaderOptions& options)
    : TrainLoader(read_normalised_info(path), split, rank, world_size, options) {}

TrainLoader::TrainLoader(DatasetInfo info, const std::string& split, int rank, int world_size,
                         const LoaderOptions& options)
    : info_(std::move(info)),
      split_(split),
      rank_(rank),
      world_size_(world_size),
      options_(options) {
  if (options.batch_size < 1)
    SLIMTRAIN_THROW(ConfigError, "--batch-size: ", options.batch_size, " must be >= 1");
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    SLIMTRAIN_THROW(ConfigError, "TrainLoader: rank ", rank, " is not in a world of ", world_size);
  }
  if (options.mode != "auto" && options.mode != "memory" && options.mode != "stream") {
    SLIMTRAIN_THROW(ConfigError, "--data-mode: '", options.mode,
                    "' must be auto, memory or stream");
  }
  if (!info_.has_split(split))
    SLIMTRAIN_THROW(DataError, info_.path, ": has no split '", split, "'");
  if (info_.named()) {
    open_named(split);
    return;
  }
  if (options.group_by_length)
    SLIMTRAIN_THROW(ConfigError, "--group-by-length: ", info_.path,
                    " has one input of fixed shape (layout 1): nothing to group by length");
  reader_ = std::make_unique<SplitReader>(info_, split);
  n_ = reader_->size();
  per_rank_ = train_share_size(n_, world_size);
  if (per_rank_ == 0) {
    SLIMTRAIN_THROW(DataError, info_.path, ": /", split, " has ", n_, " samples, fewer than the ",
                    world_size, " ranks");
  }
  steps_ = (per_rank_ + options.batch_size - 1) / options.batch_size;
  mode_ = choose_mode(split);
  if (options.augment.any())
    augmenter_ = std::make_unique<Augmenter>(options.augment, info_.sample_shape, reader_->x_type(),
                                             options.seed);
  const std::vector<std::int64_t> input = info_.input_shape();
  x_shape_.assign(input.begin(), input.end());
  if (mode_ == "memory") {
    // Zeroing 47 MB first took twice as long as reading them (Fashion-MNIST).
    all_x_.reset(new std::uint8_t[static_cast<std::size_t>(n_) * reader_->sample_bytes()]);
    all_y_.resize(static_cast<std::size_t>(n_));
    reader_->read_x(0, n_, all_x_.get());
    reader_->read_y(0, n_, all_y_.data());
    // Every row is in memory: closing the file frees its chunk and metadata caches (2 MB for
    // Fashion-MNIST, held all run otherwise) onto HDF5's own free lists, and those go back to the
    // heap, where training reuses them.
    reader_->close_file();
    H5garbage_collect();
  }
}

std::string TrainLoader::choose_mode(const std::string& split) const {
  // In doubles: 2^62 rows of a large sample overflow any integer.
  const double sample = static_cast<double>(reader_->sample_bytes());
  const double rows = static_cast<double>(n_), block = static_cast<double>(reader_->block_rows());
  const double memory_bytes = rows * (sample + sizeof(std::int64_t));
  // Stream mode: the blocks' order, a shuffle window (samples, labels, rows) and the batches
  // queued ahead (float32 samples), whatever the number of rows beyond the blocks'.
  const double window = block * std::max(1, options_.shuffle_blocks);
  const double blocks = std::ceil(rows / block);
  const double stream_bytes =
      blocks * sizeof(std::int64_t) + window * (sample + 2 * sizeof(std::int64_t)) +
      (options_.prefetch_batches + 2) * static_cast<double>(options_.batch_size) *
          (4 * static_cast<double>(info_.sample_elements()) + sizeof(std::int64_t));
  const auto budget = static_cast<double>(options_.memory_budget_bytes);
  if (options_.mode == "memory") return "memory";  // as asked, whatever it takes
  if (options_.mode == "auto" && memory_bytes <= budget) return "memory";
  if (stream_bytes <= budget) return "stream";
  const auto gib = [](double bytes) {
    return slimtrain::detail::fixed(bytes / (1u << 30), 1) + " GiB";
  };
  SLIMTRAIN_THROW(DataError, info_.path, ": /", split, " has ", n_,
                  " rows: too large for any data mode within --memory-budget-mb ",
                  options_.memory_budget_bytes >> 20, ": memory mode would hold ",
                  gib(memory_bytes), ", stream mode ", gib(stream_bytes), " (the order of its ",
                  static_cast<std::uint64_t>(blocks), " blocks of ", reader_->block_rows(),
                  " rows, and a shuffle window of ", static_cast<std::uint64_t>(window),
                  " rows); store /", split,
                  "/x in larger chunks (h5repack -l) or raise "
                  "--memory-budget-mb");
}

void TrainLoader::open_named(const std::string& split) {
  if (options_.mode == "stream")
    SLIMTRAIN_THROW(ConfigError, "--data-mode stream: ", info_.path,
                    " has named inputs (layout 2), which load in memory; use auto or memory");
  if (options_.augment.any())
    SLIMTRAIN_THROW(ConfigError, "augmentation (--augment-*) reads images of layout 1; ",
                    info_.path, " has named inputs (", describe_inputs(info_.inputs), ")");
  mode_ = "memory";
  named_ = std::make_unique<NamedSplit>(info_, split);
  if (options_.group_by_length && !named_->has_ragged())
    SLIMTRAIN_THROW(ConfigError, "--group-by-length: ", info_.path, "'s inputs (",
                    describe_inputs(info_.inputs), ") have no sequences of varying length");
  n_ = named_->size();
  per_rank_ = train_share_size(n_, world_size_);
  if (per_rank_ == 0)
    SLIMTRAIN_THROW(DataError, info_.path, ": /", split, " has ", n_, " samples, fewer than the ",
                    world_size_, " ranks");
  steps_ = (per_rank_ + options_.batch_size - 1) / options_.batch_size;
}

TrainLoader::~TrainLoader() {
  stop_prefetch();
}

std::vector<std::int64_t> TrainLoader::epoch_rows(std::int64_t epoch) const {
  if (mode_ == "stream") return stream_order(epoch).rows();
  if (!options_.group_by_length)
    return memory_epoch_rows(n_, per_rank_, rank_, options_.seed, epoch);
  return group_by_length(
      permutation(n_, options_.seed, static_cast<std::uint64_t>(epoch)),
      [&](std::int64_t row) { return named_->length(row); }, options_.batch_size,
      kGroupWindowBatches, per_rank_, rank_, world_size_, options_.seed, epoch);
}

StreamOrder TrainLoader::stream_order(std::int64_t epoch) const {
  return StreamOrder(n_, reader_->block_rows(), per_rank_, rank_, options_.shuffle_blocks,
                     options_.seed, epoch);
}

void TrainLoader::stop_prefetch() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stop_ = true;
    changed_.notify_all();
    // A producer stuck in a read (a hung file system) is not waited for past the deadline, nor
    // ever again once given up on: it is left to the read, and the job ends on the error that
    // next() threw.
    if (!abandoned_ && options_.wait_timeout_s >= 0 &&
        !changed_.wait_for(lock, std::chrono::duration<double>(options_.wait_timeout_s),
                           [&] { return producer_done_; }))
      abandoned_ = true;
    if (abandoned_) {
      if (producer_.joinable()) producer_.detach();
      return;
    }
  }
  if (producer_.joinable()) producer_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
  stop_ = false;
  producer_done_ = true;
  producer_error_ = nullptr;
}

void TrainLoader::start_epoch(std::int64_t epoch, std::int64_t skip_steps) {
  if (skip_steps < 0 || skip_steps > steps_) {
    SLIMTRAIN_THROW(ConfigError, "resume: skip of ", skip_steps, " steps is outside [0, ", steps_,
                    "]");
  }
  stop_prefetch();
  const std::int64_t start = skip_steps * options_.batch_size;
  if (mode_ == "memory") rows_ = epoch_rows(epoch);
  producer_done_ = false;
  producer_ = std::thread([this, epoch, start] {
    name_this_thread("prefetch");
    try {
      if (mode_ == "memory")
        produce_from_memory(epoch, start);
      else
        produce(epoch, start);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      producer_error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    producer_done_ = true;
    changed_.notify_all();
  });
}

Batch TrainLoader::make_batch(std::uint8_t* raw, const std::int64_t* labels,
                              const std::int64_t* rows, std::int64_t count,
                              std::int64_t epoch) const {
  if (augmenter_) {
    const std::size_t sample_bytes = reader_->sample_bytes();
    for (std::int64_t i = 0; i < count; ++i)
      augmenter_->apply(raw + static_cast<std::size_t>(i) * sample_bytes, rows[i], epoch);
  }
  std::vector<std::int64_t> shape{count};
  shape.insert(shape.end(), x_shape_.begin(), x_shape_.end());
  const BatchForm& form = options_.form;
  Batch batch;
  batch.raw = form.raw;
  batch.y = torch::empty({count}, form.options(torch::kInt64));
  if (form.raw) {  // as stored: the device converts and normalises (BatchNormaliser)
    batch.x = torch::empty(
        shape,
        form.options(reader_->x_type() == ElementType::kUint8 ? torch::kUInt8 : torch::kFloat32));
    std::memcpy(batch.x.data_ptr(), raw, static_cast<std::size_t>(count) * reader_->sample_bytes());
  } else {
    batch.x = torch::empty(shape, form.options(torch::kFloat32));
    reader_->normalize(raw, count, batch.x.data_ptr<float>());
  }
  std::memcpy(batch.y.data_ptr<std::int64_t>(), labels,
              static_cast<std::size_t>(count) * sizeof(std::int64_t));
  return batch;
}

bool TrainLoader::hand_over(Batch batch) {
  if (fault_.armed(rank_, FaultPhase::read, handed_)) fault_.fire();  // test only
  ++handed_;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] {
    return stop_ || static_cast<int>(queue_.size()) < std::max(1, options_.prefetch_batches);
  });
  if (stop_) return false;
  queue_.push_back(std::move(batch));
  changed_.notify_all();
  return true;
}

void TrainLoader::produce_from_memory(std::int64_t epoch, std::int64_t start) {
  if (named_) {
    for (std::int64_t at = start; at < per_rank_; at += options_.batch_size) {
      const std::int64_t count = std::min(options_.batch_size, per_rank_ - at);
      if (!hand_over(named_->batch(rows_.data() + at, count, options_.form))) return;
    }
    return;
  }
  const std::size_t sample_bytes = reader_->sample_bytes();
  std::vector<std::uint8_t> batch_x;
  std::vector<std::int64_t> batch_y;
  for (std::int64_t at = start; at < per_rank_; at += options_.batch_size) {
    const std::int64_t count = std::min(options_.batch_size, per_rank_ - at);
    const std::int64_t* rows = rows_.data() + at;
    batch_x.resize(static_cast<std::size_t>(count) * sample_bytes);
    batch_y.resize(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      const auto row = static_cast<std::size_t>(rows[i]);
      std::memcpy(batch_x.data() + static_cast<std::size_t>(i) * sample_bytes,
                  all_x_.get() + row * sample_bytes, sample_bytes);
      batch_y[static_cast<std::size_t>(i)] = all_y_[row];
    }
    if (!hand_over(make_batch(batch_x.data(), batch_y.data(), rows, count, epoch))) return;
  }
}

void TrainLoader::produce(std::int64_t epoch, std::int64_t start) {
  const std::size_t sample_bytes = reader_->sample_bytes();
  const std::int64_t batch = options_.batch_size;
  const StreamOrder order = stream_order(epoch);
  const std::int64_t window = order.window_rows();
  std::vector<std::uint8_t> window_x, batch_x(static_cast<std::size_t>(batch) * sample_bytes);
  std::vector<std::int64_t> window_y, window_rows, batch_y(static_cast<std::size_t>(batch)),
      batch_rows(static_cast<std::size_t>(batch));
  std::int64_t filled = 0;
  for (std::int64_t w = start / window; w < order.windows(); ++w) {
    const std::int64_t a = w * window, len = order.window_length(w);
    window_x.resize(static_cast<std::size_t>(len) * sample_bytes);
    window_y.resize(static_cast<std::size_t>(len));
    window_rows.clear();
    // Each run of consecutive rows is one hyperslab read.
    std::int64_t at = 0;
    for (const RowRun& run : order.window_runs(w)) {
      reader_->read_x(run.begin, run.count,
                      window_x.data() + static_cast<std::size_t>(at) * sample_bytes);
      reader_->read_y(run.begin, run.count, window_y.data() + at);
      for (std::int64_t i = 0; i < run.count; ++i) window_rows.push_back(run.begin + i);
      at += run.count;
    }
    const std::vector<std::int64_t> p = order.window_order(w);
    for (std::int64_t k = std::max<std::int64_t>(0, start - a); k < len; ++k) {
      const auto src = static_cast<std::size_t>(p[static_cast<std::size_t>(k)]);
      std::memcpy(batch_x.data() + static_cast<std::size_t>(filled) * sample_bytes,
                  window_x.data() + src * sample_bytes, sample_bytes);
      batch_y[static_cast<std::size_t>(filled)] = window_y[src];
      batch_rows[static_cast<std::size_t>(filled)] = window_rows[src];
      ++filled;
      if (filled == batch || a + k + 1 == per_rank_) {
        Batch b = make_batch(batch_x.data(), batch_y.data(), batch_rows.data(), filled, epoch);
        filled = 0;
        if (!hand_over(std::move(b))) return;
      }
    }
  }
}

bool TrainLoader::next(Batch& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (producer_done_ && queue_.empty() && !producer_.joinable()) {
    lock.unlock();
    start_epoch(0);
    lock.lock();
  }
  const auto ready = [&] { return !queue_.empty() || producer_done_; };
  if (options_.wait_timeout_s < 0) {
    changed_.wait(lock, ready);
  } else if (!changed_.wait_for(lock, std::chrono::duration<double>(options_.wait_timeout_s),
                                ready)) {
    SLIMTRAIN_THROW(Error, "the training data reader has not produced a batch in ",
                    options_.wait_timeout_s, " s (--io-timeout): reading ", info_.path,
                    " is stalled (a hung file system?)");
  }
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return true;
  }
  if (producer_error_) std::rethrow_exception(producer_error_);
  return false;
}

}  // namespace slimtrain::data
