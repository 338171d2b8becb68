#include "slimtrain/data/dataset_info.hpp"

#include <cmath>
#include <mutex>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::data {
namespace {

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

std::int64_t channels_of(const std::vector<std::int64_t>& sample_shape) {
  if (sample_shape.size() == 2) return 1;
  return sample_shape.empty() ? 1 : sample_shape[0];
}

std::vector<std::int64_t> DatasetInfo::input_shape() const {
  if (sample_shape.size() == 2) return {1, sample_shape[0], sample_shape[1]};
  return sample_shape;
}

bool DatasetInfo::has_split(const std::string& name) const {
  for (const SplitInfo& s : splits)
    if (s.name == name) return true;
  return false;
}

std::string DatasetInfo::split_list() const {
  std::string out;
  for (const SplitInfo& s : splits) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

const SplitInfo& DatasetInfo::split(const std::string& name) const {
  for (const SplitInfo& s : splits)
    if (s.name == name) return s;
  SLIMTRAIN_THROW(DataError, path, ": has no split '", name, "'");
}

std::int64_t DatasetInfo::split_size(const std::string& name) const {
  return split(name).size;
}

std::int64_t DatasetInfo::channels() const {
  return channels_of(sample_shape);
}

std::vector<std::string> DatasetInfo::input_names() const {
  if (!named()) return {"x"};
  std::vector<std::string> names;
  for (const InputInfo& in : inputs) names.push_back(in.name);
  return names;
}

namespace {

// Version 2: per split, /SPLIT/y and the inputs of /SPLIT/inputs, the same in every split.
void read_named_splits(hid_t file, DatasetInfo& info) {
  const std::string& path = info.path;
  for (const char* name : {"train", "val", "test"}) {
    const std::string split = name;
    if (H5Lexists(file, split.c_str(), H5P_DEFAULT) <= 0) {
      if (split == "train") SLIMTRAIN_THROW(DataError, path, ": missing group /train");
      continue;
    }
    const std::string y_where = path + ": /" + split + "/y";
    Hid y = open_dataset(file, path, "/" + split + "/y");
    const std::vector<hsize_t> y_dims = dataset_dims(y, y_where);
    if (y_dims.size() != 1) SLIMTRAIN_THROW(DataError, y_where, ": must be 1-D [N]");
    Hid y_type(SLIMTRAIN_CHECK_HDF5(H5Dget_type(y), y_where));
    if (H5Tget_class(y_type) != H5T_INTEGER)
      SLIMTRAIN_THROW(DataError, y_where, ": labels must be integers");
    SplitInfo s;
    s.name = split;
    s.size = static_cast<std::int64_t>(y_dims[0]);
    std::vector<InputInfo> inputs = read_split_inputs(file, path, split, s.size);
    if (info.splits.empty()) {
      info.inputs = std::move(inputs);
    } else if (describe_inputs(inputs) != describe_inputs(info.inputs)) {
      SLIMTRAIN_THROW(DataError, path, ": /", split, "/inputs holds ", describe_inputs(inputs),
                      " but /train/inputs ", describe_inputs(info.inputs));
    }
    info.splits.push_back(s);
  }
}

}  // namespace

std::int64_t DatasetInfo::sample_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : sample_shape) n *= d;
  return n;
}

DatasetInfo read_dataset_info(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Hid file = open_hdf5_read_only(path);
  DatasetInfo info;
  info.path = path;
  const std::string root = path + ": /";
  const std::vector<std::string> format = read_string_attribute(file, "format", root);
  if (format.size() != 1 || format[0] != kFormatName) {
    SLIMTRAIN_THROW(DataError, root, ": attribute 'format' is '", format.empty() ? "" : format[0],
                    "', expected '", kFormatName, "'");
  }
  const std::int64_t version = read_int_attribute(file, "format_version", root);
  if (version != kFormatVersion && version != kNamedInputsVersion) {
    SLIMTRAIN_THROW(DataError, root, ": format_version ", version,
                    " is not supported (this build reads ", kFormatVersion, " and ",
                    kNamedInputsVersion, ")");
  }
  info.version = version;
  info.num_classes = read_int_attribute(file, "num_classes", root);
  if (info.num_classes < 1 || info.num_classes > kMaxClasses)
    SLIMTRAIN_THROW(DataError, root, ": attribute num_classes is ", info.num_classes,
                    ", outside [1, ", kMaxClasses, "]");
  info.class_names = read_class_names(file, root);
  if (!info.class_names.empty()) {
    if (static_cast<std::int64_t>(info.class_names.size()) != info.num_classes) {
      SLIMTRAIN_THROW(DataError, root, ": class_names has ", info.class_names.size(),
                      " entries but num_classes is ", info.num_classes);
    }
  } else {
    for (std::int64_t c = 0; c < info.num_classes; ++c)
      info.class_names.push_back(std::to_string(c));
  }

  if (info.named()) {
    read_named_splits(file, info);
    return info;
  }
  for (const char* name : {"train", "val", "test"}) {
    const std::string split = name;
    if (H5Lexists(file, split.c_str(), H5P_DEFAULT) <= 0) {
      if (split == "train") SLIMTRAIN_THROW(DataError, path, ": missing group /train");
      continue;
    }
    const std::string x_name = "/" + split + "/x", y_name = "/" + split + "/y";
    const std::string x_where = path + ": " + x_name, y_where = path + ": " + y_name;
    Hid x = open_dataset(file, path, x_name);
    Hid y = open_dataset(file, path, y_name);
    note_hdf5_read(x_where, " and ", y_name, ": shapes, dtypes and storage layout");
    const std::vector<hsize_t> x_dims = dataset_dims(x, x_where);
    const std::vector<hsize_t> y_dims = dataset_dims(y, y_where);
    if (x_dims.size() < 2 || x_dims.size() > 4) {
      SLIMTRAIN_THROW(DataError, x_where, ": shape ", shape_text(x_dims),
                      " must be [N, D], [N, H, W] or [N, C, H, W]");
    }
    if (x_dims[0] > static_cast<hsize_t>(std::int64_t{1} << 62))
      SLIMTRAIN_THROW(DataError, x_where, ": shape ", shape_text(x_dims),
                      " has more than 2^62 rows");
    if (y_dims.size() != 1 || y_dims[0] != x_dims[0]) {
      SLIMTRAIN_THROW(DataError, y_where, ": shape ", shape_text(y_dims),
                      " must be [N] with N = ", x_dims[0], " as in ", x_name);
    }
    // Sizes are computed in int64 from here on: a sample past kMaxSampleElements (a damaged
    // shape, or dimensions whose product overflows) is refused before anything is allocated.
    std::uint64_t elements = 1;
    for (std::size_t i = 1; i < x_dims.size(); ++i) {
      if (x_dims[i] < 1)
        SLIMTRAIN_THROW(DataError, x_where, ": shape ", shape_text(x_dims),
                        " has an empty sample dimension");
      if (x_dims[i] > static_cast<hsize_t>(kMaxSampleElements) ||
          (elements *= x_dims[i]) > static_cast<std::uint64_t>(kMaxSampleElements))
        SLIMTRAIN_THROW(DataError, x_where, ": shape ", shape_text(x_dims), " has more than ",
                        kMaxSampleElements, " elements per sample");
    }
    const std::vector<std::int64_t> shape(x_dims.begin() + 1, x_dims.end());
    if (info.splits.empty()) {
      info.sample_shape = shape;
    } else if (shape != info.sample_shape) {
      SLIMTRAIN_THROW(DataError, x_where, ": sample shape differs from /train/x");
    }
    SplitInfo s;
    s.name = split;
    s.size = static_cast<std::int64_t>(x_dims[0]);
    Hid x_type(SLIMTRAIN_CHECK_HDF5(H5Dget_type(x), x_where));
    const H5T_class_t x_class = H5Tget_class(x_type);
    const std::size_t x_size = H5Tget_size(x_type);
    if (x_class == H5T_INTEGER && x_size == 1 && H5Tget_sign(x_type) == H5T_SGN_NONE) {
      s.x_type = ElementType::kUint8;
    } else if (x_class == H5T_FLOAT && x_size == 4) {
      s.x_type = ElementType::kFloat32;
    } else {
      SLIMTRAIN_THROW(DataError, x_where, ": dtype must be uint8 or float32");
    }
    Hid y_type(SLIMTRAIN_CHECK_HDF5(H5Dget_type(y), y_where));
    if (H5Tget_class(y_type) != H5T_INTEGER)
      SLIMTRAIN_THROW(DataError, y_where, ": labels must be integers");
    Hid plist(SLIMTRAIN_CHECK_HDF5(H5Dget_create_plist(x), x_where));
    if (H5Pget_layout(plist) == H5D_CHUNKED) {
      std::vector<hsize_t> chunk(x_dims.size());
      H5Pget_chunk(plist, static_cast<int>(chunk.size()), chunk.data());
      s.chunk_rows = static_cast<std::int64_t>(chunk[0]);
      s.compressed = H5Pget_nfilters(plist) > 0;
    }
    // mean/std are train statistics: a split without them uses /train/x's, and a file with
    // none gets them computed at load time (normalisation.hpp). Present, they must be sound.
    const bool has_mean = has_attribute(x, "mean", x_where),
               has_std = has_attribute(x, "std", x_where);
    if (has_mean != has_std)
      SLIMTRAIN_THROW(DataError, x_where, ": has attribute '", has_mean ? "mean" : "std",
                      "' but not '", has_mean ? "std" : "mean", "' (give both or neither)");
    if (has_mean) {
      const std::vector<float> mean = read_float_attribute(x, "mean", x_where);
      const std::vector<float> std = read_float_attribute(x, "std", x_where);
      const auto channels = static_cast<std::size_t>(channels_of(shape));
      if (mean.size() != channels || std.size() != channels) {
        SLIMTRAIN_THROW(DataError, x_where, ": mean/std have ", mean.size(), "/", std.size(),
                        " values, expected ", channels, " (one per channel or feature)");
      }
      for (std::size_t c = 0; c < channels; ++c) {
        if (!std::isfinite(mean[c]) || !std::isfinite(std[c]) || std[c] < 0) {
          SLIMTRAIN_THROW(DataError, x_where, ": mean/std of channel ", c,
                          " are not finite or std < 0");
        }
      }
      if (split == "train") {
        info.mean = mean;
        info.std = std;
      }
    }
    info.splits.push_back(s);
  }
  return info;
}

}  // namespace slimtrain::data
