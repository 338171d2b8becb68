#include "slimtrain/data/eval_loader.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/normalisation.hpp"

namespace slimtrain::data {

EvalLoader::EvalLoader(const std::string& path, const std::string& split, int rank, int world_size,
                       std::int64_t batch_size)
    : EvalLoader(read_normalised_info(path), split, rank, world_size, batch_size) {}

EvalLoader::EvalLoader(DatasetInfo info, const std::string& split, int rank, int world_size,
                       std::int64_t batch_size)
    : info_(std::move(info)), batch_size_(batch_size) {
  if (batch_size < 1)
    SLIMTRAIN_THROW(ConfigError, "--eval-batch-size: ", batch_size, " must be >= 1");
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    SLIMTRAIN_THROW(ConfigError, "EvalLoader: rank ", rank, " is not in a world of ", world_size);
  }
  if (!info_.has_split(split))
    SLIMTRAIN_THROW(DataError, info_.path, ": has no split '", split, "'");
  if (info_.named())
    named_ = std::make_unique<NamedSplit>(info_, split);
  else
    reader_ = std::make_unique<SplitReader>(info_, split);
  global_ = named_ ? named_->size() : reader_->size();
  share_ = eval_share(global_, rank, world_size);
  position_ = share_.begin;
  x_shape_ = info_.input_shape();
}

bool EvalLoader::next(Batch& out) {
  if (position_ >= share_.end) return false;
  const std::int64_t count = std::min(batch_size_, share_.end - position_);
  if (named_) {
    std::vector<std::int64_t> rows(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) rows[static_cast<std::size_t>(i)] = position_ + i;
    out = named_->batch(rows.data(), count);
    position_ += count;
    return true;
  }
  std::vector<std::int64_t> shape{count};
  shape.insert(shape.end(), x_shape_.begin(), x_shape_.end());
  raw_.resize(static_cast<std::size_t>(count) * reader_->sample_bytes());
  reader_->read_x(position_, count, raw_.data());
  out.x = torch::empty(shape, torch::kFloat32);
  out.y = torch::empty({count}, torch::kInt64);
  reader_->read_y(position_, count, out.y.data_ptr<std::int64_t>());
  reader_->normalize(raw_.data(), count, out.x.data_ptr<float>());
  position_ += count;
  return true;
}

}  // namespace slimtrain::data
