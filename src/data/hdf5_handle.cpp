#include "slimtrain/data/hdf5_handle.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

namespace {
herr_t close_any(hid_t id) {
  switch (H5Iget_type(id)) {
    case H5I_FILE:
      return H5Fclose(id);
    case H5I_GROUP:
      return H5Gclose(id);
    case H5I_DATASET:
      return H5Dclose(id);
    case H5I_DATASPACE:
      return H5Sclose(id);
    case H5I_DATATYPE:
      return H5Tclose(id);
    case H5I_ATTR:
      return H5Aclose(id);
    case H5I_GENPROP_LST:
      return H5Pclose(id);
    default:
      return 0;
  }
}
}  // namespace

void Hid::reset() {
  if (id_ < 0) return;
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  // Errors while closing are not actionable here; the identifier type picks the close call.
  close_any(id_);
  id_ = H5I_INVALID_HID;
}

void Hid::close_checked(const std::string& where) {
  if (id_ < 0) return;
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  const hid_t id = id_;
  id_ = H5I_INVALID_HID;
  if (close_any(id) < 0) SLIMTRAIN_THROW(DataError, where, ": closing the file failed");
}

}  // namespace slimtrain::data
