#include "slimtrain/data/hdf5_file.hpp"

#include <sys/stat.h>

#include "slimtrain/core/check_hdf5.hpp"

namespace slimtrain::data {

void silence_hdf5_errors() {
  static bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

Hid open_hdf5_read_only(const std::string& path) {
  silence_hdf5_errors();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) SLIMTRAIN_THROW(DataError, path, ": no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) SLIMTRAIN_THROW(DataError, path, ": not an HDF5 file");
  return Hid(SLIMTRAIN_CHECK_HDF5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path));
}

Hid open_dataset(hid_t file, const std::string& path, const std::string& dataset) {
  if (H5Lexists(file, dataset.c_str(), H5P_DEFAULT) <= 0 ||
      H5Oexists_by_name(file, dataset.c_str(), H5P_DEFAULT) <= 0) {
    SLIMTRAIN_THROW(DataError, path, ": missing dataset ", dataset);
  }
  return Hid(
      SLIMTRAIN_CHECK_HDF5(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), path + ": " + dataset));
}

}  // namespace slimtrain::data
