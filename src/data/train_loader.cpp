#include "slimtrain/data/train_loader.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstring>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/thread_name.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/data/shard.hpp"

namespace slimtrain::data {
namespace {

// The within-window shuffle of the stream mode: its own stream per (seed, epoch, rank, window).
std::vector<std::int64_t> window_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch,
                                             int rank, std::int64_t window) {
  std::uint64_t state = seed ^ (0x5851f42d4c957f2dull * static_cast<std::uint64_t>(rank + 1));
  const std::uint64_t mixed = splitmix64(state) ^ static_cast<std::uint64_t>(window);
  return permutation(n, mixed, static_cast<std::uint64_t>(epoch) + 0x1000000);
}

}  // namespace

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
  const std::size_t split_bytes =
      static_cast<std::size_t>(n_) * (reader_->sample_bytes() + sizeof(std::int64_t));
  mode_ = options.mode == "auto"
              ? (split_bytes <= options.memory_budget_bytes ? "memory" : "stream")
              : options.mode;
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

std::vector<std::int64_t> TrainLoader::grouped(const std::vector<std::int64_t>& order,
                                               std::int64_t epoch) const {
  // Every rank groups the whole epoch alike and takes its slice of each global batch, so the
  // batches of one step hold sequences of about one length on every rank: no rank waits for
  // another's long batch (grouped per rank, a step at np 2 ran as slow as the longer of two
  // unrelated batches).
  const std::int64_t batch = options_.batch_size, global = batch * world_size_;
  const std::int64_t window = global * kGroupWindowBatches, n = per_rank_ * world_size_;
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(per_rank_));
  for (std::int64_t a = 0, w = 0; a < n; a += window, ++w) {
    const std::int64_t len = std::min(window, n - a);  // a multiple of the world size
    // Longest first within the window; the shuffled order decides ties, so the sort is stable.
    std::vector<std::pair<std::int64_t, std::int64_t>> keyed;  // (-length, row)
    for (std::int64_t k = a; k < a + len; ++k)
      keyed.emplace_back(-named_->length(order[static_cast<std::size_t>(k)]),
                         order[static_cast<std::size_t>(k)]);
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    // Full global batches in a shuffled order, a short one (the epoch's last window only) at the
    // end: anywhere else it would shift every later batch of a rank across two lengths.
    const std::int64_t full = len / global;
    std::vector<std::int64_t> shuffled =
        window_permutation(full, options_.seed ^ 0x67726f7570ull, epoch, 0, w);  // "group"
    if (full * global < len) shuffled.push_back(full);
    for (std::int64_t b : shuffled) {
      const std::int64_t begin = b * global,
                         share = (std::min(len, begin + global) - begin) / world_size_;
      for (std::int64_t k = begin + rank_ * share; k < begin + (rank_ + 1) * share; ++k)
        out.push_back(keyed[static_cast<std::size_t>(k)].second);
    }
  }
  return out;
}

TrainLoader::~TrainLoader() {
  stop_prefetch();
}

std::vector<TrainLoader::Segment> TrainLoader::stream_segments(std::int64_t epoch) const {
  const std::int64_t block = reader_->block_rows();
  const std::int64_t blocks = (n_ + block - 1) / block;
  const std::vector<std::int64_t> order =
      permutation(blocks, options_.seed, static_cast<std::uint64_t>(epoch));
  // This rank's positions [first, last) of the concatenated permuted blocks.
  const std::int64_t first = rank_ * per_rank_, last = first + per_rank_;
  std::vector<Segment> segments;
  std::int64_t position = 0;
  for (std::int64_t b : order) {
    const std::int64_t begin = b * block, count = std::min(block, n_ - begin);
    const std::int64_t lo = std::max(position, first), hi = std::min(position + count, last);
    if (lo < hi) segments.push_back({begin + (lo - position), hi - lo});
    position += count;
    if (position >= last) break;
  }
  return segments;
}

std::vector<std::int64_t> TrainLoader::epoch_rows(std::int64_t epoch) const {
  if (mode_ == "memory") {
    const std::vector<std::int64_t> order =
        permutation(n_, options_.seed, static_cast<std::uint64_t>(epoch));
    if (options_.group_by_length) return grouped(order, epoch);
    return std::vector<std::int64_t>(order.begin() + rank_ * per_rank_,
                                     order.begin() + (rank_ + 1) * per_rank_);
  }
  std::vector<std::int64_t> base;
  for (const Segment& s : stream_segments(epoch))
    for (std::int64_t i = 0; i < s.count; ++i) base.push_back(s.begin + i);
  const std::int64_t window = reader_->block_rows() * std::max(1, options_.shuffle_blocks);
  std::vector<std::int64_t> rows(base.size());
  for (std::int64_t a = 0, w = 0; a < per_rank_; a += window, ++w) {
    const std::int64_t len = std::min(window, per_rank_ - a);
    const std::vector<std::int64_t> p = window_permutation(len, options_.seed, epoch, rank_, w);
    for (std::int64_t k = 0; k < len; ++k)
      rows[static_cast<std::size_t>(a + k)] =
          base[static_cast<std::size_t>(a + p[static_cast<std::size_t>(k)])];
  }
  return rows;
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
  Batch batch;
  batch.x = torch::empty(shape, torch::kFloat32);
  batch.y = torch::empty({count}, torch::kInt64);
  reader_->normalize(raw, count, batch.x.data_ptr<float>());
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
      if (!hand_over(named_->batch(rows_.data() + at, count))) return;
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
  const std::int64_t window = reader_->block_rows() * std::max(1, options_.shuffle_blocks);
  std::vector<std::int64_t> base;
  for (const Segment& s : stream_segments(epoch))
    for (std::int64_t i = 0; i < s.count; ++i) base.push_back(s.begin + i);
  std::vector<std::uint8_t> window_x, batch_x(static_cast<std::size_t>(batch) * sample_bytes);
  std::vector<std::int64_t> window_y, batch_y(static_cast<std::size_t>(batch)),
      batch_rows(static_cast<std::size_t>(batch));
  std::int64_t filled = 0;
  for (std::int64_t w = start / window; w * window < per_rank_; ++w) {
    const std::int64_t a = w * window, len = std::min(window, per_rank_ - a);
    window_x.resize(static_cast<std::size_t>(len) * sample_bytes);
    window_y.resize(static_cast<std::size_t>(len));
    // Runs of consecutive rows become one hyperslab read each.
    for (std::int64_t i = 0; i < len;) {
      std::int64_t j = i + 1;
      while (j < len &&
             base[static_cast<std::size_t>(a + j)] == base[static_cast<std::size_t>(a + j - 1)] + 1)
        ++j;
      reader_->read_x(base[static_cast<std::size_t>(a + i)], j - i,
                      window_x.data() + static_cast<std::size_t>(i) * sample_bytes);
      reader_->read_y(base[static_cast<std::size_t>(a + i)], j - i, window_y.data() + i);
      i = j;
    }
    const std::vector<std::int64_t> p = window_permutation(len, options_.seed, epoch, rank_, w);
    for (std::int64_t k = std::max<std::int64_t>(0, start - a); k < len; ++k) {
      const auto src = static_cast<std::size_t>(p[static_cast<std::size_t>(k)]);
      std::memcpy(batch_x.data() + static_cast<std::size_t>(filled) * sample_bytes,
                  window_x.data() + src * sample_bytes, sample_bytes);
      batch_y[static_cast<std::size_t>(filled)] = window_y[src];
      batch_rows[static_cast<std::size_t>(filled)] = base[static_cast<std::size_t>(a) + src];
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
