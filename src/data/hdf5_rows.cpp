#include "slimtrain/data/hdf5_rows.hpp"

#include <mutex>
#include <vector>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::data {
namespace {

// The file's and memory's selections of rows [first, first + count); caller holds the lock.
struct RowSelection {
  Hid file_space, memory_space;
};

RowSelection select_rows(hid_t dataset, std::int64_t first, std::int64_t count,
                         const std::string& where) {
  RowSelection s;
  s.file_space = Hid(SLIMTRAIN_CHECK_HDF5(H5Dget_space(dataset), where));
  const int rank = SLIMTRAIN_CHECK_HDF5(H5Sget_simple_extent_ndims(s.file_space), where);
  if (rank < 1) SLIMTRAIN_THROW(DataError, where, ": a scalar, not rows");
  std::vector<hsize_t> start(static_cast<std::size_t>(rank), 0),
      dims(static_cast<std::size_t>(rank));
  SLIMTRAIN_CHECK_HDF5(H5Sget_simple_extent_dims(s.file_space, dims.data(), nullptr), where);
  start[0] = static_cast<hsize_t>(first);
  dims[0] = static_cast<hsize_t>(count);
  s.memory_space = Hid(SLIMTRAIN_CHECK_HDF5(H5Screate_simple(rank, dims.data(), nullptr), where));
  if (count == 0) {
    SLIMTRAIN_CHECK_HDF5(H5Sselect_none(s.file_space), where);
    SLIMTRAIN_CHECK_HDF5(H5Sselect_none(s.memory_space), where);
  } else {
    SLIMTRAIN_CHECK_HDF5(H5Sselect_hyperslab(s.file_space, H5S_SELECT_SET, start.data(), nullptr,
                                             dims.data(), nullptr),
                         where);
  }
  return s;
}

std::string rows_of(const std::string& where, std::int64_t first, std::int64_t count) {
  return where + " rows " + std::to_string(first) + ".." + std::to_string(first + count);
}

}  // namespace

void read_rows(hid_t dataset, hid_t memory_type, std::int64_t first, std::int64_t count,
               void* buffer, const std::string& where, hid_t transfer) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  const RowSelection s = select_rows(dataset, first, count, where);
  SLIMTRAIN_CHECK_HDF5(
      H5Dread(dataset, memory_type, s.memory_space, s.file_space, transfer, buffer),
      rows_of(where, first, count));
}

void write_rows(hid_t dataset, hid_t memory_type, std::int64_t first, std::int64_t count,
                const void* buffer, const std::string& where, hid_t transfer) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  const RowSelection s = select_rows(dataset, first, count, where);
  SLIMTRAIN_CHECK_HDF5(
      H5Dwrite(dataset, memory_type, s.memory_space, s.file_space, transfer, buffer),
      rows_of(where, first, count));
}

}  // namespace slimtrain::data
