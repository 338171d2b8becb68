#include "slimtrain/data/hdf5_file.hpp"

#include <sys/stat.h>

#include <map>
#include <mutex>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::data {
namespace {

// Registered file images by name; guarded by hdf5_mutex().
std::map<std::string, std::vector<std::uint8_t>>& file_images() {
  static std::map<std::string, std::vector<std::uint8_t>> images;
  return images;
}

Hid open_image(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  if (bytes.size() < 8) SLIMTRAIN_THROW(DataError, name, ": not an HDF5 file");
  Hid access(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_FILE_ACCESS), name));
  SLIMTRAIN_CHECK_HDF5(H5Pset_fapl_core(access.get(), 1 << 16, /*backing_store=*/0), name);
  // HDF5 copies the image (its 1.10 signature takes void* all the same): the bytes stay as they
  // are.
  SLIMTRAIN_CHECK_HDF5(
      H5Pset_file_image(access.get(), const_cast<std::uint8_t*>(bytes.data()), bytes.size()), name);
  const hid_t file = H5Fopen(name.c_str(), H5F_ACC_RDONLY, access.get());
  if (file < 0) SLIMTRAIN_THROW(DataError, name, ": not an HDF5 file (no readable superblock)");
  return Hid(file);
}

}  // namespace

void silence_hdf5_errors() {
  static bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

void set_hdf5_file_image(const std::string& name, std::vector<std::uint8_t> bytes) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  file_images()[name] = std::move(bytes);
}

Hid open_hdf5_read_only(const std::string& path) {
  silence_hdf5_errors();
  note_hdf5_read(path, ": the superblock and root group");
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    const auto image = file_images().find(path);
    if (image != file_images().end()) return open_image(path, image->second);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) SLIMTRAIN_THROW(DataError, path, ": no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) SLIMTRAIN_THROW(DataError, path, ": not an HDF5 file");
  return Hid(SLIMTRAIN_CHECK_HDF5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path));
}

Hid open_dataset(hid_t file, const std::string& path, const std::string& dataset) {
  note_hdf5_read(path, ": ", dataset);
  if (H5Lexists(file, dataset.c_str(), H5P_DEFAULT) <= 0)
    SLIMTRAIN_THROW(DataError, path, ": missing dataset ", dataset);
  if (H5Oexists_by_name(file, dataset.c_str(), H5P_DEFAULT) <= 0) {
    // The name is there but leads nowhere: a link into another file that cannot be opened.
    std::string reason = slimtrain::detail::hdf5_error_string();
    if (reason.empty()) {  // opening it says why
      const hid_t object = H5Oopen(file, dataset.c_str(), H5P_DEFAULT);
      if (object >= 0) H5Oclose(object);
      reason = slimtrain::detail::hdf5_error_string();
    }
    const std::string target = external_link_target(file, dataset);
    if (!target.empty())
      SLIMTRAIN_THROW(DataError, path, ": ", dataset, " is an external link to ", target,
                      ", which cannot be opened", reason.empty() ? "" : ": ", reason);
    SLIMTRAIN_THROW(DataError, path, ": missing dataset ", dataset, " (its link leads nowhere",
                    reason.empty() ? "" : ": ", reason, ")");
  }
  Hid d(SLIMTRAIN_CHECK_HDF5(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), path + ": " + dataset));
  require_filters(d.get(), path, dataset);
  return d;
}

std::string external_link_target(hid_t file, const std::string& name) {
  H5L_info_t info{};
  if (H5Lget_info(file, name.c_str(), &info, H5P_DEFAULT) < 0 || info.type != H5L_TYPE_EXTERNAL)
    return "";
  std::vector<char> value(info.u.val_size + 1, '\0');
  const char* target_file = nullptr;
  const char* target_object = nullptr;
  unsigned flags = 0;
  if (H5Lget_val(file, name.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0 ||
      H5Lunpack_elink_val(value.data(), info.u.val_size, &flags, &target_file, &target_object) < 0)
    return "another file";
  return std::string(target_file ? target_file : "?") + ":" + (target_object ? target_object : "?");
}

void require_filters(hid_t dataset, const std::string& path, const std::string& name) {
  Hid plist(SLIMTRAIN_CHECK_HDF5(H5Dget_create_plist(dataset), path + ": " + name));
  const int filters = H5Pget_nfilters(plist.get());
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    char filter[256] = {};
    const H5Z_filter_t id = H5Pget_filter2(plist.get(), static_cast<unsigned>(i), &flags, &values,
                                           nullptr, sizeof filter, filter, &config);
    if (id < 0 || H5Zfilter_avail(id) > 0) continue;
    slimtrain::detail::hdf5_error_string();  // the plugin search's failure: said below, in words
    SLIMTRAIN_THROW(DataError, path, ": ", name, " is compressed with the filter '",
                    filter[0] != '\0' ? filter : "?", "' (HDF5 filter ", id,
                    "), which this HDF5 does not have: rewrite it without "
                    "(h5repack -f NONE in.h5 out.h5) or give HDF5 the filter's plugin "
                    "(HDF5_PLUGIN_PATH)");
  }
}

std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& where) {
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Dget_space(dataset), where));
  const int rank = SLIMTRAIN_CHECK_HDF5(H5Sget_simple_extent_ndims(space), where);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  SLIMTRAIN_CHECK_HDF5(H5Sget_simple_extent_dims(space, dims.data(), nullptr), where);
  return dims;
}

std::int64_t dataset_elements(hid_t file, const std::string& path, const std::string& name) {
  Hid data = open_dataset(file, path, name);
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Dget_space(data), path + ": " + name));
  return H5Sget_simple_extent_npoints(space);
}

}  // namespace slimtrain::data
