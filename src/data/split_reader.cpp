#include "slimtrain/data/split_reader.hpp"

#include <algorithm>
#include <mutex>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_rows.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::data {

SplitReader::SplitReader(const DatasetInfo& info, const std::string& split)
    : path_(info.path), split_(split), num_classes_(info.num_classes) {
  const SplitInfo& s = info.split(split);
  size_ = s.size;
  x_type_ = s.x_type;
  sample_elements_ = info.sample_elements();
  sample_bytes_ = static_cast<std::size_t>(sample_elements_) * element_size(x_type_);
  block_rows_ = s.chunk_rows > 0 ? s.chunk_rows
                                 : std::max<std::int64_t>(
                                       1, (1 << 20) / static_cast<std::int64_t>(sample_bytes_));
  channels_ = info.channels();
  inner_ = sample_elements_ / channels_;
  if (info.mean.size() != static_cast<std::size_t>(channels_))
    SLIMTRAIN_THROW(Error, info.path, ": reading /", split,
                    " before its mean/std are known (ensure_normalisation)");
  mean_ = info.mean;
  for (float sd : info.std) inv_std_.push_back(sd > 0 ? 1.0f / sd : 1.0f);

  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  file_ = open_hdf5_read_only(path_);
  x_ = open_dataset(file_, path_, "/" + split + "/x");
  y_ = open_dataset(file_, path_, "/" + split + "/y");
}

void SplitReader::read(hid_t dataset, hid_t memory_type, std::int64_t begin, std::int64_t count,
                       void* out) const {
  if (count <= 0) return;
  if (!file_.valid())
    SLIMTRAIN_THROW(Error, path_, ": /", split_,
                    " read after its file was closed (held in memory)");
  const std::string where = path_ + ": /" + split_ + (dataset == x_.get() ? "/x" : "/y");
  note_hdf5_read(where, " rows ", begin, "..", begin + count);
  read_rows(dataset, memory_type, begin, count, out, where);
}

void SplitReader::close_file() {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  y_.reset();
  x_.reset();
  file_.reset();
}

void SplitReader::read_x(std::int64_t begin, std::int64_t count, void* x) const {
  read(x_, x_type_ == ElementType::kUint8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_FLOAT, begin, count, x);
}

void SplitReader::read_y(std::int64_t begin, std::int64_t count, std::int64_t* y) const {
  read(y_, H5T_NATIVE_INT64, begin, count, y);
  for (std::int64_t i = 0; i < count; ++i) {
    if (y[i] < 0 || y[i] >= num_classes_) {
      SLIMTRAIN_THROW(DataError, path_, ": /", split_, "/y row ", begin + i, ": label ", y[i],
                      " is outside [0, ", num_classes_, ")");
    }
  }
}

void SplitReader::normalize(const void* raw, std::int64_t count, float* out) const {
  for (std::int64_t i = 0; i < count; ++i) {
    for (std::int64_t c = 0; c < channels_; ++c) {
      const float m = mean_[static_cast<std::size_t>(c)];
      const float s = inv_std_[static_cast<std::size_t>(c)];
      const std::int64_t offset = i * sample_elements_ + c * inner_;
      float* o = out + offset;
      if (x_type_ == ElementType::kUint8) {
        const std::uint8_t* p = static_cast<const std::uint8_t*>(raw) + offset;
        for (std::int64_t k = 0; k < inner_; ++k) o[k] = (static_cast<float>(p[k]) - m) * s;
      } else {
        const float* p = static_cast<const float*>(raw) + offset;
        for (std::int64_t k = 0; k < inner_; ++k) o[k] = (p[k] - m) * s;
      }
    }
  }
}

}  // namespace slimtrain::data
