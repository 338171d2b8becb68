#include "slimtrain/data/inspect.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <mutex>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/data/hdf5_file.hpp"

namespace slimtrain::data {
namespace {

// Reads `rows` rows of a dataset starting at `begin` (caller holds the lock).
void read_rows(hid_t dataset, hid_t memory_type, std::int64_t begin, std::int64_t rows,
               std::int64_t row_elements, void* out, const std::string& where) {
  Hid file_space(SLIMTRAIN_CHECK_HDF5(H5Dget_space(dataset), where));
  const int rank = H5Sget_simple_extent_ndims(file_space);
  std::vector<hsize_t> start(static_cast<std::size_t>(rank), 0),
      count(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(file_space, count.data(), nullptr);
  start[0] = static_cast<hsize_t>(begin);
  count[0] = static_cast<hsize_t>(rows);
  SLIMTRAIN_CHECK_HDF5(
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
      where);
  const hsize_t n = static_cast<hsize_t>(rows * row_elements);
  Hid memory_space(SLIMTRAIN_CHECK_HDF5(H5Screate_simple(1, &n, nullptr), where));
  SLIMTRAIN_CHECK_HDF5(H5Dread(dataset, memory_type, memory_space, file_space, H5P_DEFAULT, out),
                       where);
}

}  // namespace

std::vector<std::int64_t> label_histogram(const DatasetInfo& info, const std::string& split) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Hid file = open_hdf5_read_only(info.path);
  const std::string name = "/" + split + "/y";
  Hid y = open_dataset(file, info.path, name);
  const std::int64_t n = info.split_size(split);
  std::vector<std::int64_t> histogram(static_cast<std::size_t>(info.num_classes), 0);
  std::vector<std::int64_t> labels;
  const std::int64_t block = 1 << 20;
  for (std::int64_t begin = 0; begin < n; begin += block) {
    const std::int64_t rows = std::min(block, n - begin);
    labels.resize(static_cast<std::size_t>(rows));
    read_rows(y, H5T_NATIVE_INT64, begin, rows, 1, labels.data(), info.path + ": " + name);
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t label = labels[static_cast<std::size_t>(i)];
      if (label < 0 || label >= info.num_classes) {
        SLIMTRAIN_THROW(DataError, info.path, ": ", name, " row ", begin + i, ": label ", label,
                        " is outside [0, ", info.num_classes, ")");
      }
      ++histogram[static_cast<std::size_t>(label)];
    }
  }
  return histogram;
}

std::string label_counts(const DatasetInfo& info, const std::vector<std::int64_t>& histogram) {
  std::string out;
  const std::size_t shown = std::min(histogram.size(), kInspectClassesShown);
  for (std::size_t c = 0; c < shown; ++c)
    out += " " + info.class_names[c] + "=" + std::to_string(histogram[c]);
  if (histogram.size() > shown)
    out += " ... (" + std::to_string(histogram.size() - shown) + " more)";
  return out;
}

std::string class_list(const DatasetInfo& info) {
  std::string out = std::to_string(info.num_classes) + " (";
  const std::size_t shown = std::min(info.class_names.size(), kInspectClassesShown);
  for (std::size_t c = 0; c < shown; ++c) out += (c ? ", " : "") + info.class_names[c];
  if (info.class_names.size() > shown)
    out += ", ... (" + std::to_string(info.class_names.size() - shown) + " more)";
  return out + ")";
}

void inspect_dataset(const std::string& path, bool validate, std::ostream& out) {
  const DatasetInfo info = read_dataset_info(path);
  auto shape_text = [](const std::vector<std::int64_t>& shape) {
    std::string s;
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " x " : "") + std::to_string(shape[i]);
    return s;
  };
  out << path << ": slimtrain HDF5 layout version " << info.version << "\n";
  if (info.named()) {
    out << "  classes: " << class_list(info) << "\n";
    inspect_named(info, validate, out);
    if (validate)
      out << "valid: " << path << " conforms to layout version " << info.version << "\n";
    return;
  }
  out << "  sample shape: " << shape_text(info.sample_shape) << " (model input "
      << shape_text(info.input_shape()) << ")\n";
  out << "  classes: " << class_list(info) << "\n  mean/std (train, per "
      << (info.sample_shape.size() == 1 ? "feature" : "channel") << "):";
  const std::size_t shown = std::min<std::size_t>(info.mean.size(), 8);
  for (std::size_t c = 0; c < shown; ++c) out << " " << info.mean[c] << "/" << info.std[c];
  if (info.mean.size() > shown) out << " ... (" << info.mean.size() << " in all)";
  if (info.mean.empty()) out << " none in the file (training computes them from /train/x)";
  out << "\n";
  for (const SplitInfo& s : info.splits) {
    out << "  /" << s.name << ": " << s.size << " samples, x " << element_name(s.x_type) << " ["
        << s.size;
    for (std::int64_t d : info.sample_shape) out << ", " << d;
    out << "], y [" << s.size << "], ";
    if (s.chunk_rows > 0) {
      out << "chunks of " << s.chunk_rows << " rows" << (s.compressed ? ", compressed" : "")
          << "\n";
    } else {
      out << "contiguous\n";
    }
    const std::vector<std::int64_t> histogram = label_histogram(info, s.name);
    out << "    labels:" << label_counts(info, histogram) << "\n";
    if (validate && s.x_type == ElementType::kFloat32) {
      std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
      Hid file = open_hdf5_read_only(path);
      const std::string name = "/" + s.name + "/x";
      Hid x = open_dataset(file, path, name);
      const std::int64_t elements = info.sample_elements();
      const std::int64_t block = std::max<std::int64_t>(1, (8 << 20) / (4 * elements));
      std::vector<float> values;
      for (std::int64_t begin = 0; begin < s.size; begin += block) {
        const std::int64_t rows = std::min(block, s.size - begin);
        values.resize(static_cast<std::size_t>(rows * elements));
        read_rows(x, H5T_NATIVE_FLOAT, begin, rows, elements, values.data(), path + ": " + name);
        for (std::size_t k = 0; k < values.size(); ++k) {
          if (!std::isfinite(values[k])) {
            SLIMTRAIN_THROW(DataError, path, ": ", name, " row ",
                            begin + std::int64_t(k) / elements, ": value is NaN or infinite");
          }
        }
      }
    }
  }
  if (validate)
    out << "valid: " << path << " conforms to layout version " << kFormatVersion << "\n";
}

}  // namespace slimtrain::data
