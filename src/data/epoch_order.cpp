#include "slimtrain/data/epoch_order.hpp"

#include <algorithm>
#include <utility>

#include "slimtrain/data/shard.hpp"

namespace slimtrain::data {

std::vector<std::int64_t> window_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch,
                                             int rank, std::int64_t window) {
  std::uint64_t state = seed ^ (0x5851f42d4c957f2dull * static_cast<std::uint64_t>(rank + 1));
  const std::uint64_t mixed = splitmix64(state) ^ static_cast<std::uint64_t>(window);
  return permutation(n, mixed, static_cast<std::uint64_t>(epoch) + 0x1000000);
}

std::vector<std::int64_t> memory_epoch_rows(std::int64_t rows, std::int64_t per_rank, int rank,
                                            std::uint64_t seed, std::int64_t epoch) {
  const std::vector<std::int64_t> order =
      permutation(rows, seed, static_cast<std::uint64_t>(epoch));
  return std::vector<std::int64_t>(order.begin() + rank * per_rank,
                                   order.begin() + (rank + 1) * per_rank);
}

std::vector<std::int64_t> group_by_length(const std::vector<std::int64_t>& order,
                                          const std::function<std::int64_t(std::int64_t)>& length,
                                          std::int64_t batch, std::int64_t window_batches,
                                          std::int64_t per_rank, int rank, int world,
                                          std::uint64_t seed, std::int64_t epoch) {
  // Every rank groups the whole epoch alike and takes its slice of each global batch, so the
  // batches of one step hold sequences of about one length on every rank: no rank waits for
  // another's long batch (grouped per rank, a step at np 2 ran as slow as the longer of two
  // unrelated batches).
  const std::int64_t global = batch * world;
  const std::int64_t window = global * window_batches, n = per_rank * world;
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(per_rank));
  for (std::int64_t a = 0, w = 0; a < n; a += window, ++w) {
    const std::int64_t len = std::min(window, n - a);  // a multiple of the world size
    // Longest first within the window; the shuffled order decides ties, so the sort is stable.
    std::vector<std::pair<std::int64_t, std::int64_t>> keyed;  // (-length, row)
    for (std::int64_t k = a; k < a + len; ++k)
      keyed.emplace_back(-length(order[static_cast<std::size_t>(k)]),
                         order[static_cast<std::size_t>(k)]);
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    // Full global batches in a shuffled order, a short one (the epoch's last window only) at the
    // end: anywhere else it would shift every later batch of a rank across two lengths.
    const std::int64_t full = len / global;
    std::vector<std::int64_t> shuffled =
        window_permutation(full, seed ^ 0x67726f7570ull, epoch, 0, w);  // "group"
    if (full * global < len) shuffled.push_back(full);
    for (std::int64_t b : shuffled) {
      const std::int64_t begin = b * global,
                         share = (std::min(len, begin + global) - begin) / world;
      for (std::int64_t k = begin + rank * share; k < begin + (rank + 1) * share; ++k)
        out.push_back(keyed[static_cast<std::size_t>(k)].second);
    }
  }
  return out;
}

StreamOrder::StreamOrder(std::int64_t rows, std::int64_t block_rows, std::int64_t per_rank,
                         int rank, int shuffle_blocks, std::uint64_t seed, std::int64_t epoch)
    : rows_(rows),
      block_rows_(std::max<std::int64_t>(1, block_rows)),
      per_rank_(per_rank),
      window_(block_rows_ * std::max(1, shuffle_blocks)),
      rank_(rank),
      seed_(seed),
      epoch_(epoch) {
  const std::int64_t blocks = (rows_ + block_rows_ - 1) / block_rows_;
  blocks_ = permutation(blocks, seed, static_cast<std::uint64_t>(epoch));
  if (rows_ % block_rows_ != 0)
    short_at_ = std::find(blocks_.begin(), blocks_.end(), blocks - 1) - blocks_.begin();
}

std::int64_t StreamOrder::block_size(std::int64_t index) const {
  return index == short_at_ ? rows_ % block_rows_ : block_rows_;
}

void StreamOrder::locate(std::int64_t position, std::int64_t& index, std::int64_t& offset) const {
  // Every block holds block_rows_ rows but the short last one, wherever the permutation put it.
  const std::int64_t before_short = short_at_ < 0 ? position + 1 : short_at_ * block_rows_;
  if (position < before_short) {
    index = position / block_rows_;
    offset = position % block_rows_;
    return;
  }
  const std::int64_t after = position - before_short - block_size(short_at_);
  if (after < 0) {
    index = short_at_;
    offset = position - before_short;
    return;
  }
  index = short_at_ + 1 + after / block_rows_;
  offset = after % block_rows_;
}

std::int64_t StreamOrder::window_length(std::int64_t w) const {
  return std::min(window_, per_rank_ - w * window_);
}

std::vector<RowRun> StreamOrder::window_runs(std::int64_t w) const {
  std::vector<RowRun> runs;
  std::int64_t position = rank_ * per_rank_ + w * window_, left = window_length(w);
  while (left > 0) {
    std::int64_t index = 0, offset = 0;
    locate(position, index, offset);
    const std::int64_t take = std::min(block_size(index) - offset, left);
    const std::int64_t begin = blocks_[static_cast<std::size_t>(index)] * block_rows_ + offset;
    if (!runs.empty() && runs.back().begin + runs.back().count == begin)
      runs.back().count += take;  // blocks that follow each other in the file: one read
    else
      runs.push_back({begin, take});
    position += take;
    left -= take;
  }
  return runs;
}

std::vector<std::int64_t> StreamOrder::window_order(std::int64_t w) const {
  return window_permutation(window_length(w), seed_, epoch_, rank_, w);
}

std::vector<std::int64_t> StreamOrder::rows() const {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(per_rank_));
  for (std::int64_t w = 0; w < windows(); ++w) {
    std::vector<std::int64_t> base;
    for (const RowRun& r : window_runs(w))
      for (std::int64_t i = 0; i < r.count; ++i) base.push_back(r.begin + i);
    for (const std::int64_t k : window_order(w)) out.push_back(base[static_cast<std::size_t>(k)]);
  }
  return out;
}

}  // namespace slimtrain::data
