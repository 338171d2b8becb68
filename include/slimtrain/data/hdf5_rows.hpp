#pragma once
/**
 * @brief Rows [first, first + count) of an HDF5 dataset read or written in one call: a hyperslab
 * over the first dimension (every other dimension whole) and a memory space of the same shape,
 * so `buffer` holds the rows packed in row-major order. Both take hdf5_mutex() (HDF5 is built
 * without thread safety) and report errors through SLIMTRAIN_CHECK_HDF5 as DataError naming
 * `where` (the file and the dataset), the read or write itself also the rows.
 *
 * A count of 0 selects nothing and still makes the call, so a collective transfer (MPI-IO, where
 * every rank joins each write) works on a rank with no rows.
 */
#include <hdf5.h>

#include <cstdint>
#include <string>

namespace slimtrain::data {

/** @brief Reads rows [first, first + count) of `dataset` as `memory_type` into `buffer`. */
void read_rows(hid_t dataset, hid_t memory_type, std::int64_t first, std::int64_t count,
               void* buffer, const std::string& where, hid_t transfer = H5P_DEFAULT);

/** @brief Writes rows [first, first + count) of `dataset` from `buffer` of `memory_type`. */
void write_rows(hid_t dataset, hid_t memory_type, std::int64_t first, std::int64_t count,
                const void* buffer, const std::string& where, hid_t transfer = H5P_DEFAULT);

}  // namespace slimtrain::data
