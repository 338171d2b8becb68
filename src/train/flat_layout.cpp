#include "slimtrain/train/flat_layout.hpp"

#include <algorithm>

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

ShardMode parse_shard_mode(const std::string& name) {
  if (name == "none") return ShardMode::none;
  if (name == "optimizer") return ShardMode::optimizer;
  if (name == "gradients") return ShardMode::gradients;
  if (name == "parameters") return ShardMode::parameters;
  SLIMTRAIN_THROW(ConfigError, "--shard must be none, optimizer, gradients or parameters, not '",
                  name, "'");
}

const char* to_string(ShardMode mode) {
  switch (mode) {
    case ShardMode::optimizer:
      return "optimizer";
    case ShardMode::gradients:
      return "gradients";
    case ShardMode::parameters:
      return "parameters";
    case ShardMode::none:
      break;
  }
  return "none";
}

FlatLayout::FlatLayout(const std::vector<std::int64_t>& numels, std::size_t bucket_bytes, int world)
    : world_(world) {
  if (world < 1) SLIMTRAIN_THROW(ConfigError, "flat layout: world size ", world, " < 1");
  bucket_of_.resize(numels.size());
  offset_.resize(numels.size());
  logical_.resize(numels.size());
  std::size_t current_bytes = 0;
  for (std::size_t k = numels.size(); k-- > 0;) {
    const std::size_t bytes = static_cast<std::size_t>(numels[k]) * sizeof(float);
    if (buckets_.empty() || (current_bytes > 0 && current_bytes + bytes > bucket_bytes)) {
      FlatBucket b;
      b.offset = padded_;
      b.logical = numel_;
      buckets_.push_back(b);
      current_bytes = 0;
    }
    FlatBucket& b = buckets_.back();
    bucket_of_[k] = buckets_.size() - 1;
    offset_[k] = b.offset + b.numel;
    logical_[k] = numel_;
    b.params.push_back(k);
    b.numel += numels[k];
    numel_ += numels[k];
    current_bytes += bytes;
    // Padded as it grows, so the next bucket starts after this one's padding.
    b.padded = (b.numel + world - 1) / world * world;
    padded_ = b.offset + b.padded;
  }
}

std::vector<ShardPiece> FlatLayout::shard(int rank) const {
  std::vector<ShardPiece> pieces;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const FlatBucket& b = buckets_[i];
    const std::int64_t length = b.padded / world_;
    const std::int64_t first = static_cast<std::int64_t>(rank) * length;
    ShardPiece p;
    p.bucket = i;
    p.flat = b.offset + first;
    p.length = length;
    p.logical.start = b.logical + std::min(first, b.numel);
    p.logical.length = std::clamp<std::int64_t>(b.numel - first, 0, length);
    pieces.push_back(p);
  }
  return pieces;
}

}  // namespace slimtrain::train
