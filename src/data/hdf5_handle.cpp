#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::data {

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

void Hid::reset() {
  if (id_ < 0) return;
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  // Errors while closing are not actionable here; the identifier type picks the close call.
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      break;
  }
  id_ = H5I_INVALID_HID;
}

}  // namespace slimtrain::data
