#pragma once
/**
 * @brief Row-range reads from one split of a slimtrain HDF5 file (opened read-only, serial
 * driver: each rank opens its own handle), and the uint8/float32 to normalised float32
 * conversion. Torch-free; the loaders and the reader benchmark build on it. Thread-safe: every
 * HDF5 call takes hdf5_mutex().
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::data {

class SplitReader {
 public:
  SplitReader(const DatasetInfo& info, const std::string& split);

  std::int64_t size() const { return size_; }
  ElementType x_type() const { return x_type_; }
  std::size_t sample_bytes() const { return sample_bytes_; }
  /** @brief Rows per chunk of x, or rows in ~1 MiB when x is contiguous. */
  std::int64_t block_rows() const { return block_rows_; }

  /** @brief Raw x rows [begin, begin + count) in the stored type into `x`. */
  void read_x(std::int64_t begin, std::int64_t count, void* x) const;
  /** @brief Labels [begin, begin + count); DataError naming the row when out of [0, C). */
  void read_y(std::int64_t begin, std::int64_t count, std::int64_t* y) const;
  /** @brief (raw - mean[c]) / std[c] for `count` samples (std 0 counts as 1). */
  void normalize(const void* raw, std::int64_t count, float* out) const;
  /** @brief Closes the file once every row is in memory: HDF5 holds a chunk cache and a metadata
   * cache per open file (2 MB for Fashion-MNIST) all run otherwise. Reads throw after it. */
  void close_file();

 private:
  void read(hid_t dataset, hid_t memory_type, std::int64_t begin, std::int64_t count,
            void* out) const;
  std::string path_, split_;
  std::int64_t num_classes_ = 0;
  Hid file_, x_, y_;
  std::int64_t size_ = 0;
  ElementType x_type_ = ElementType::kUint8;
  std::size_t sample_bytes_ = 0;
  std::int64_t sample_elements_ = 0;
  std::int64_t block_rows_ = 1;
  std::int64_t channels_ = 1, inner_ = 1;
  std::vector<float> mean_, inv_std_;
};

}  // namespace slimtrain::data
