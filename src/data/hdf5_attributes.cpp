#include "slimtrain/data/hdf5_attributes.hpp"

#include <algorithm>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/data/hdf5_handle.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::data {
namespace {

Hid open_attribute(hid_t object, const std::string& name, const std::string& where) {
  if (!has_attribute(object, name, where)) {
    SLIMTRAIN_THROW(DataError, where, ": missing attribute '", name, "'");
  }
  return Hid(SLIMTRAIN_CHECK_HDF5(H5Aopen(object, name.c_str(), H5P_DEFAULT), where));
}

// The values an attribute declares, checked against the file before anything is allocated for
// them: a damaged header can declare 2^62 of them (fuzz_hdf5 found one), and each value the
// attribute holds takes at least one byte of the file (a fixed-size one, its size).
std::int64_t element_count(hid_t attribute, hid_t file_type, const std::string& where,
                           const std::string& name) {
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Aget_space(attribute), where));
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0) SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' has no readable extent");
  if (H5Sget_simple_extent_ndims(space) > 1) {
    SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' must be a scalar or 1-D");
  }
  const std::size_t width =
      H5Tis_variable_str(file_type) > 0 ? 1 : std::max<std::size_t>(1, H5Tget_size(file_type));
  hsize_t file_bytes = 0;
  Hid file(SLIMTRAIN_CHECK_HDF5(H5Iget_file_id(attribute), where));
  SLIMTRAIN_CHECK_HDF5(H5Fget_filesize(file, &file_bytes), where);
  if (static_cast<hsize_t>(n) > file_bytes / width) {
    SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' declares ", n, " values of ", width,
                    " bytes, more than the file's ", file_bytes,
                    " bytes can hold: the file is damaged; check it with h5dump, or write it "
                    "again");
  }
  return n;
}

}  // namespace

bool has_attribute(hid_t object, const std::string& name, const std::string& where) {
  note_hdf5_read(where, ": attribute '", name, "'");
  return H5Aexists(object, name.c_str()) > 0;
}

std::vector<std::string> read_string_attribute(hid_t object, const std::string& name,
                                               const std::string& where) {
  Hid attribute = open_attribute(object, name, where);
  Hid file_type(SLIMTRAIN_CHECK_HDF5(H5Aget_type(attribute), where));
  if (H5Tget_class(file_type) != H5T_STRING) {
    SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' must be a string (or strings)");
  }
  const auto n = static_cast<std::size_t>(element_count(attribute, file_type, where, name));
  std::vector<std::string> out;
  if (H5Tis_variable_str(file_type) > 0) {
    Hid memory_type(SLIMTRAIN_CHECK_HDF5(H5Tcopy(H5T_C_S1), where));
    H5Tset_size(memory_type, H5T_VARIABLE);
    H5Tset_cset(memory_type, H5Tget_cset(file_type));
    std::vector<char*> raw(n, nullptr);
    SLIMTRAIN_CHECK_HDF5(H5Aread(attribute, memory_type, raw.data()),
                         where + ": attribute " + name);
    for (char* s : raw) out.emplace_back(s ? s : "");
    Hid space(H5Aget_space(attribute));
    H5Dvlen_reclaim(memory_type, space, H5P_DEFAULT, raw.data());
  } else {
    const std::size_t width = H5Tget_size(file_type);
    Hid memory_type(SLIMTRAIN_CHECK_HDF5(H5Tcopy(file_type), where));
    std::vector<char> raw(n * width + 1, '\0');
    SLIMTRAIN_CHECK_HDF5(H5Aread(attribute, memory_type, raw.data()),
                         where + ": attribute " + name);
    for (std::size_t i = 0; i < n; ++i) {
      const char* s = raw.data() + i * width;
      std::size_t len = 0;
      while (len < width && s[len] != '\0') ++len;
      while (len > 0 && s[len - 1] == ' ') --len;  // space-padded fixed strings
      out.emplace_back(s, len);
    }
  }
  return out;
}

std::int64_t read_int_attribute(hid_t object, const std::string& name, const std::string& where) {
  Hid attribute = open_attribute(object, name, where);
  Hid file_type(SLIMTRAIN_CHECK_HDF5(H5Aget_type(attribute), where));
  if (H5Tget_class(file_type) != H5T_INTEGER) {
    SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' must be an integer");
  }
  if (element_count(attribute, file_type, where, name) != 1) {
    SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' must hold one integer");
  }
  std::int64_t value = 0;
  SLIMTRAIN_CHECK_HDF5(H5Aread(attribute, H5T_NATIVE_INT64, &value), where + ": attribute " + name);
  return value;
}

std::vector<float> read_float_attribute(hid_t object, const std::string& name,
                                        const std::string& where) {
  Hid attribute = open_attribute(object, name, where);
  Hid file_type(SLIMTRAIN_CHECK_HDF5(H5Aget_type(attribute), where));
  const H5T_class_t type_class = H5Tget_class(file_type);
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER) {
    SLIMTRAIN_THROW(DataError, where, ": attribute '", name, "' must be numeric");
  }
  std::vector<float> values(
      static_cast<std::size_t>(element_count(attribute, file_type, where, name)));
  if (!values.empty()) {
    SLIMTRAIN_CHECK_HDF5(H5Aread(attribute, H5T_NATIVE_FLOAT, values.data()),
                         where + ": attribute " + name);
  }
  return values;
}

void write_string_attribute(hid_t object, const std::string& name,
                            const std::vector<std::string>& values, bool scalar) {
  Hid type(SLIMTRAIN_CHECK_HDF5(H5Tcopy(H5T_C_S1), name));
  SLIMTRAIN_CHECK_HDF5(H5Tset_size(type, H5T_VARIABLE), name);
  SLIMTRAIN_CHECK_HDF5(H5Tset_cset(type, H5T_CSET_UTF8), name);
  const hsize_t n = values.size();
  Hid space(SLIMTRAIN_CHECK_HDF5(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr),
                                 name));
  Hid attribute(SLIMTRAIN_CHECK_HDF5(
      H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), name));
  std::vector<const char*> pointers;
  for (const std::string& s : values) pointers.push_back(s.c_str());
  SLIMTRAIN_CHECK_HDF5(H5Awrite(attribute, type, pointers.data()), "attribute " + name);
}

void write_int_attribute(hid_t object, const std::string& name, std::int64_t value) {
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Screate(H5S_SCALAR), name));
  Hid attribute(SLIMTRAIN_CHECK_HDF5(
      H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), name));
  SLIMTRAIN_CHECK_HDF5(H5Awrite(attribute, H5T_NATIVE_INT64, &value), "attribute " + name);
}

void write_float_attribute(hid_t object, const std::string& name,
                           const std::vector<float>& values) {
  const hsize_t n = values.size();
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Screate_simple(1, &n, nullptr), name));
  Hid attribute(SLIMTRAIN_CHECK_HDF5(
      H5Acreate2(object, name.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT), name));
  SLIMTRAIN_CHECK_HDF5(H5Awrite(attribute, H5T_NATIVE_FLOAT, values.data()), "attribute " + name);
}

void write_class_names(hid_t file, const std::vector<std::string>& names, bool writer) {
  if (names.size() <= kClassNamesInAttribute) {
    write_string_attribute(file, "class_names", names, false);
    return;
  }
  std::size_t width = 1;
  for (const std::string& n : names) width = std::max(width, n.size());
  std::vector<char> packed(names.size() * width, '\0');
  for (std::size_t i = 0; i < names.size(); ++i)
    std::copy(names[i].begin(), names[i].end(), packed.begin() + static_cast<long>(i * width));
  Hid type(SLIMTRAIN_CHECK_HDF5(H5Tcopy(H5T_C_S1), "class_names"));
  SLIMTRAIN_CHECK_HDF5(H5Tset_size(type, width), "class_names");
  SLIMTRAIN_CHECK_HDF5(H5Tset_strpad(type, H5T_STR_NULLPAD), "class_names");
  SLIMTRAIN_CHECK_HDF5(H5Tset_cset(type, H5T_CSET_UTF8), "class_names");
  const hsize_t n = names.size();
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Screate_simple(1, &n, nullptr), "class_names"));
  Hid dataset(SLIMTRAIN_CHECK_HDF5(
      H5Dcreate2(file, "class_names", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      "class_names"));
  if (writer)
    SLIMTRAIN_CHECK_HDF5(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()),
                         "dataset /class_names");
}

std::vector<std::string> read_class_names(hid_t file, const std::string& where) {
  if (has_attribute(file, "class_names", where))
    return read_string_attribute(file, "class_names", where);
  if (H5Lexists(file, "class_names", H5P_DEFAULT) <= 0) return {};
  const std::string at = where + ": /class_names";
  Hid dataset(SLIMTRAIN_CHECK_HDF5(H5Dopen2(file, "class_names", H5P_DEFAULT), at));
  Hid type(SLIMTRAIN_CHECK_HDF5(H5Dget_type(dataset), at));
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Dget_space(dataset), at));
  if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) > 0 ||
      H5Sget_simple_extent_ndims(space) != 1)
    SLIMTRAIN_THROW(DataError, at, ": must be a 1-D dataset of fixed-width strings");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  const std::size_t width = H5Tget_size(type);
  std::vector<char> raw(static_cast<std::size_t>(n) * width + 1, '\0');
  SLIMTRAIN_CHECK_HDF5(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), at);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    const char* s = raw.data() + i * width;
    std::size_t len = 0;
    while (len < width && s[len] != '\0') ++len;
    out.emplace_back(s, len);
  }
  return out;
}

}  // namespace slimtrain::data
