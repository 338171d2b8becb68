#pragma once
/** @brief Opening an HDF5 file read-only with quiet error printing and a clear DataError. */
#include <string>

#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::data {

/** @brief Turns off HDF5's automatic error-stack printing (errors become DataError instead). */
void silence_hdf5_errors();

/** @brief Opens an existing file read-only (sec2 driver); caller holds hdf5_mutex(). */
Hid open_hdf5_read_only(const std::string& path);

/** @brief Opens /<split>/<name> of `file`, naming path and dataset on failure. */
Hid open_dataset(hid_t file, const std::string& path, const std::string& dataset);

}  // namespace slimtrain::data
