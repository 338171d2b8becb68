#pragma once
/** @brief Opening an HDF5 file read-only with quiet error printing and a clear DataError. */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::data {

/** @brief Turns off HDF5's automatic error-stack printing (errors become DataError instead). */
void silence_hdf5_errors();

/**
 * @brief Opens an existing file read-only (sec2 driver), or the image registered for `path` by
 * set_hdf5_file_image (core driver); caller holds hdf5_mutex().
 */
Hid open_hdf5_read_only(const std::string& path);

/**
 * @brief From now on, open_hdf5_read_only(name) opens `bytes` as the file's contents, through
 * HDF5's core driver (an in-memory file image), with no file on disk: fuzz/fuzz_hdf5.cpp runs
 * every check the loaders and `inspect --validate` make on arbitrary bytes this way.
 */
void set_hdf5_file_image(const std::string& name, std::vector<std::uint8_t> bytes);

/**
 * @brief Opens /<split>/<name> of `file`, naming path and dataset on failure; a link into
 * another file that cannot be opened is named with its target, and a dataset behind a filter
 * this HDF5 lacks with the filter (require_filters), before anything is read.
 */
Hid open_dataset(hid_t file, const std::string& path, const std::string& dataset);

/** @brief "gone.h5:/train/x" when `name` is an external link, else "". */
std::string external_link_target(hid_t file, const std::string& name);

/**
 * @brief DataError naming the file, the dataset and the filter when `dataset` is stored through
 * a filter this HDF5 cannot apply (LZF, Blosc: plugins it was not given).
 */
void require_filters(hid_t dataset, const std::string& path, const std::string& name);

/** @brief The dimensions of `dataset`; DataError naming `where` on failure. */
std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& where);

/** @brief The elements of /<name> of `file` (the product of its dimensions). */
std::int64_t dataset_elements(hid_t file, const std::string& path, const std::string& name);

}  // namespace slimtrain::data
