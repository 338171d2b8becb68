#pragma once
/**
 * @brief Where every trainable parameter lives in one flat float32 buffer, cut into gradient
 * buckets and, for --shard, into per-rank shards.
 *
 * Parameters go, in reverse registration order (the order backward produces their gradients),
 * into buckets of about `bucket_bytes`. Each bucket is padded to a multiple of the world size and
 * cut into one equal piece per rank: rank r's shard is piece r of every bucket. So a bucket is
 * reduce-scattered on its own the moment backward has filled it, and each rank's result lands in
 * its shard (one contiguous shard per rank over the whole buffer would need reductions of unequal
 * sizes, which NCCL does not have). The padding is under world-size elements per bucket.
 *
 * The logical order, in which checkpoints describe optimizer state, is the parameters in bucket
 * order, each in its contiguous (row-major) element order, without padding: it does not depend on
 * the world size or the bucket size, so a checkpoint reshards onto any layout.
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::train {

/** @brief --shard: ZeRO stage 0, 1, 2 or 3. */
enum class ShardMode { none, optimizer, gradients, parameters };
/** @brief ConfigError naming --shard for anything but none, optimizer, gradients, parameters. */
ShardMode parse_shard_mode(const std::string& name);
const char* to_string(ShardMode mode);

/** @brief A run of elements in the logical order. */
struct LogicalRange {
  std::int64_t start = 0;
  std::int64_t length = 0;
};

struct FlatBucket {
  std::vector<std::size_t> params;  ///< indices into the parameter list, in bucket order
  std::int64_t offset = 0;          ///< its first element in the flat buffer
  std::int64_t logical = 0;         ///< its first element in the logical order
  std::int64_t numel = 0;           ///< its parameters' elements
  std::int64_t padded = 0;          ///< numel rounded up to a multiple of the world size
};

/** @brief One rank's piece of one bucket. */
struct ShardPiece {
  std::size_t bucket = 0;
  std::int64_t flat = 0;    ///< first element in the flat buffer
  std::int64_t length = 0;  ///< elements in the buffer (the bucket's piece size)
  LogicalRange logical;     ///< the parameters' elements it holds (padding excluded)
};

class FlatLayout {
 public:
  /** @param numels the parameters' element counts, in registration order. */
  FlatLayout(const std::vector<std::int64_t>& numels, std::size_t bucket_bytes, int world);

  const std::vector<FlatBucket>& buckets() const { return buckets_; }
  int world() const { return world_; }
  /** @brief Elements of the flat buffer, padding included. */
  std::int64_t padded_numel() const { return padded_; }
  /** @brief Elements of the parameters. */
  std::int64_t numel() const { return numel_; }
  std::size_t bucket_of(std::size_t param) const { return bucket_of_[param]; }
  /** @brief A parameter's first element in the flat buffer. */
  std::int64_t offset_of(std::size_t param) const { return offset_[param]; }
  /** @brief A parameter's first element in the logical order. */
  std::int64_t logical_of(std::size_t param) const { return logical_[param]; }
  std::int64_t piece_length(std::size_t bucket) const { return buckets_[bucket].padded / world_; }
  /** @brief Rank `rank`'s shard: its piece of every bucket, in bucket order. */
  std::vector<ShardPiece> shard(int rank) const;

 private:
  int world_;
  std::vector<FlatBucket> buckets_;
  std::vector<std::size_t> bucket_of_;
  std::vector<std::int64_t> offset_, logical_;
  std::int64_t padded_ = 0, numel_ = 0;
};

}  // namespace slimtrain::train
