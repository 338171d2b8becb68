#include "slimtrain/data/inspect.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <mutex>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_rows.hpp"

namespace slimtrain::data {
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
    read_rows(y, H5T_NATIVE_INT64, begin, rows, labels.data(), info.path + ": " + name);
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
        read_rows(x, H5T_NATIVE_FLOAT, begin, rows, values.data(), path + ": " + name);
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
