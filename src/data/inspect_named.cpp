// `slimtrain inspect` of a layout-2 file: each input's dtype and shape, or its length histogram,
// and with --validate every offset and every token id checked.
#include <algorithm>
#include <mutex>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_rows.hpp"
#include "slimtrain/data/inspect.hpp"

namespace slimtrain::data {
namespace {

std::vector<std::int64_t> read_int64s(hid_t file, const std::string& path, const std::string& name,
                                      std::int64_t begin, std::int64_t count) {
  Hid data = open_dataset(file, path, name);
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  read_rows(data, H5T_NATIVE_INT64, begin, count, out.data(), path + ": " + name);
  return out;
}

// Every token id of `name` (any shape, read whole) against [0, vocab_size); the row is the
// sample's (through the offsets of a ragged input).
void check_ids(hid_t file, const std::string& path, const std::string& name, const InputInfo& in,
               const std::vector<std::int64_t>* offsets) {
  const std::int64_t total = dataset_elements(file, path, name);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(total));
  Hid data = open_dataset(file, path, name);
  if (total > 0)
    SLIMTRAIN_CHECK_HDF5(H5Dread(data, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids.data()),
                         path + ": " + name);
  const std::int64_t per_row = std::max<std::int64_t>(1, in.sample_elements());
  std::size_t row = 0;
  for (std::int64_t at = 0; at < total; ++at) {
    if (offsets)
      while (row + 1 < offsets->size() && (*offsets)[row + 1] <= at) ++row;
    const std::int64_t id = ids[static_cast<std::size_t>(at)];
    if (id < 0 || id >= in.vocab_size)
      SLIMTRAIN_THROW(DataError, path, ": ", name, " row ",
                      offsets ? static_cast<std::int64_t>(row) : at / per_row, ": token id ", id,
                      " is outside [0, ", in.vocab_size, ") (vocab_size)");
  }
}

}  // namespace

void inspect_named(const DatasetInfo& info, bool validate, std::ostream& out) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Hid file = open_hdf5_read_only(info.path);
  out << "  inputs: " << describe_inputs(info.inputs) << "\n";
  // prep text stores its SentencePiece model at /tokenizer: every later reader decodes with it.
  if (H5Lexists(file, "tokenizer", H5P_DEFAULT) > 0) {
    const std::string where = info.path + ": /tokenizer";
    out << "  tokenizer: /tokenizer, " << dataset_elements(file, info.path, "/tokenizer")
        << " bytes";
    Hid tokenizer(SLIMTRAIN_CHECK_HDF5(H5Dopen2(file, "tokenizer", H5P_DEFAULT), where));
    for (const char* attribute : {"kind", "trained"})
      if (has_attribute(tokenizer, attribute, where))
        out << ", " << attribute << " " << read_string_attribute(tokenizer, attribute, where)[0];
    out << "\n";
  }
  for (const SplitInfo& s : info.splits) {
    out << "  /" << s.name << ": " << s.size << " samples\n";
    for (const InputInfo& in : info.inputs) {
      const std::string name = "/" + s.name + "/inputs/" + in.name;
      out << "    " << in.name << ": " << input_type_name(in.type);
      if (!in.ragged) {
        out << " [" << s.size;
        for (std::int64_t d : in.shape) out << ", " << d;
        out << "]";
        if (!in.mean.empty()) out << ", mean/std " << in.mean[0] << "/" << in.std[0] << "...";
        out << "\n";
        if (validate && in.integer() && in.vocab_size > 0)
          check_ids(file, info.path, name, in, nullptr);
        continue;
      }
      const std::vector<std::int64_t> offsets =
          read_int64s(file, info.path, name + "/offsets", 0, s.size + 1);
      const std::int64_t values = dataset_elements(file, info.path, name + "/values");
      std::vector<std::int64_t> lengths;
      for (std::int64_t r = 0; r < s.size; ++r) {
        const std::int64_t len =
            offsets[static_cast<std::size_t>(r + 1)] - offsets[static_cast<std::size_t>(r)];
        if (validate && (len < 0 || (r == 0 && offsets[0] != 0)))
          SLIMTRAIN_THROW(DataError, info.path, ": ", name, "/offsets row ", r,
                          len < 0 ? ": offsets decrease" : ": does not start at 0");
        lengths.push_back(len);
      }
      if (validate && offsets.back() != values)
        SLIMTRAIN_THROW(DataError, info.path, ": ", name, "/offsets: the last offset is ",
                        offsets.back(), " but values holds ", values, " elements");
      std::sort(lengths.begin(), lengths.end());
      auto at = [&](double q) {
        return lengths.empty() ? 0
                               : lengths[static_cast<std::size_t>(
                                     q * static_cast<double>(lengths.size() - 1) + 0.5)];
      };
      out << " ragged, " << values << " values; lengths min " << at(0) << ", median " << at(0.5)
          << ", p99 " << at(0.99) << ", max " << at(1) << "; pad_id " << in.pad_id;
      if (in.vocab_size > 0) out << ", vocab_size " << in.vocab_size;
      out << "; batched with " << mask_name(in.name) << "\n";
      if (validate && in.integer() && in.vocab_size > 0)
        check_ids(file, info.path, name + "/values", in, &offsets);
    }
    const std::vector<std::int64_t> histogram = label_histogram(info, s.name);
    out << "    labels:" << label_counts(info, histogram) << "\n";
  }
}

}  // namespace slimtrain::data
