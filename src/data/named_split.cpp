#include "slimtrain/data/named_split.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/batch_memory.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::data {
namespace {

hid_t native(InputType type) {
  switch (type) {
    case InputType::u8:
      return H5T_NATIVE_UINT8;
    case InputType::i32:
      return H5T_NATIVE_INT32;
    case InputType::i64:
      return H5T_NATIVE_INT64;
    case InputType::f32:
      break;
  }
  return H5T_NATIVE_FLOAT;
}

// A whole dataset in the native form of `type` (or int64).
void read_all(hid_t file, const std::string& path, const std::string& name, hid_t memory_type,
              void* out) {
  Hid data = open_dataset(file, path, name);
  note_hdf5_read(path, ": ", name, ": all rows");
  SLIMTRAIN_CHECK_HDF5(H5Dread(data, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out),
                       path + ": " + name);
}

std::int64_t id_at(const std::vector<std::uint8_t>& data, InputType type, std::int64_t i) {
  if (type == InputType::i32) {
    std::int32_t v = 0;
    std::memcpy(&v, data.data() + i * 4, 4);
    return v;
  }
  std::int64_t v = 0;
  std::memcpy(&v, data.data() + i * 8, 8);
  return v;
}

// Integer ids of rows' elements against [0, vocab_size).
void check_ids(const std::vector<std::uint8_t>& data, const InputInfo& in, std::int64_t rows,
               std::int64_t per_row, const std::vector<std::int64_t>* offsets,
               const std::string& where) {
  if (in.vocab_size <= 0) return;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t a = offsets ? (*offsets)[static_cast<std::size_t>(r)] : r * per_row;
    const std::int64_t b = offsets ? (*offsets)[static_cast<std::size_t>(r + 1)] : a + per_row;
    for (std::int64_t i = a; i < b; ++i) {
      const std::int64_t id = id_at(data, in.type, i);
      if (id < 0 || id >= in.vocab_size)
        SLIMTRAIN_THROW(DataError, where, " row ", r, ": token id ", id, " is outside [0, ",
                        in.vocab_size, ") (vocab_size)");
    }
  }
}

float scale_of(const InputInfo& in, std::size_t c) {
  return in.std[c] > 0 ? 1.0f / in.std[c] : 1.0f;
}

}  // namespace

std::int64_t padded_length(std::int64_t longest, std::int64_t max_length) {
  std::int64_t length = std::max<std::int64_t>(8, (longest + 7) / 8 * 8);
  if (max_length > 0) length = std::min(length, max_length);
  return length;
}

NamedSplit::NamedSplit(const DatasetInfo& info, const std::string& split)
    : split_(split), max_length_(info.max_length) {
  if (!info.named()) SLIMTRAIN_THROW(Error, info.path, ": NamedSplit reads layout version 2 only");
  const std::string& path = info.path;
  const std::int64_t rows = info.split_size(split);
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Hid file = open_hdf5_read_only(path);
  y_.resize(static_cast<std::size_t>(rows));
  read_all(file, path, "/" + split + "/y", H5T_NATIVE_INT64, y_.data());
  for (std::int64_t r = 0; r < rows; ++r)
    if (y_[static_cast<std::size_t>(r)] < 0 || y_[static_cast<std::size_t>(r)] >= info.num_classes)
      SLIMTRAIN_THROW(DataError, path, ": /", split, "/y row ", r, ": label ",
                      y_[static_cast<std::size_t>(r)], " is outside [0, ", info.num_classes, ")");
  for (const InputInfo& in_info : info.inputs) {
    Input in;
    in.info = in_info;
    const std::string name = "/" + split + "/inputs/" + in_info.name;
    const std::string where = path + ": " + name;
    const std::size_t element = input_type_size(in_info.type);
    if (!in_info.ragged) {
      in.data.resize(static_cast<std::size_t>(rows * in_info.sample_elements()) * element);
      read_all(file, path, name, native(in_info.type), in.data.data());
      if (in_info.integer())
        check_ids(in.data, in_info, rows, in_info.sample_elements(), nullptr, where);
      inputs_.push_back(std::move(in));
      continue;
    }
    in.offsets.resize(static_cast<std::size_t>(rows + 1));
    read_all(file, path, name + "/offsets", H5T_NATIVE_INT64, in.offsets.data());
    const std::int64_t values = dataset_elements(file, path, name + "/values");
    if (in.offsets[0] != 0)
      SLIMTRAIN_THROW(DataError, where, "/offsets row 0: starts at ", in.offsets[0], ", not 0");
    for (std::int64_t r = 0; r < rows; ++r)
      if (in.offsets[static_cast<std::size_t>(r + 1)] < in.offsets[static_cast<std::size_t>(r)])
        SLIMTRAIN_THROW(DataError, where, "/offsets row ", r, ": the sequence ends at ",
                        in.offsets[static_cast<std::size_t>(r + 1)], " before it starts at ",
                        in.offsets[static_cast<std::size_t>(r)], " (offsets must not decrease)");
    if (in_info.row_size > 1)
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t n =
            in.offsets[static_cast<std::size_t>(r + 1)] - in.offsets[static_cast<std::size_t>(r)];
        if (n % in_info.row_size != 0)
          SLIMTRAIN_THROW(DataError, where, "/offsets row ", r, ": ", n,
                          " values are not whole rows of row_size ", in_info.row_size);
      }
    if (in.offsets.back() != values)
      SLIMTRAIN_THROW(DataError, where, "/offsets: the last offset is ", in.offsets.back(),
                      " but values holds ", values, " elements");
    in.data.resize(static_cast<std::size_t>(values) * element);
    read_all(file, path, name + "/values", native(in_info.type), in.data.data());
    if (in_info.integer()) check_ids(in.data, in_info, rows, 0, &in.offsets, where + "/values");
    inputs_.push_back(std::move(in));
  }
}

std::size_t NamedSplit::bytes() const {
  std::size_t total = y_.size() * sizeof(std::int64_t);
  for (const Input& in : inputs_)
    total += in.data.size() + in.offsets.size() * sizeof(std::int64_t);
  return total;
}

bool NamedSplit::has_ragged() const {
  return std::any_of(inputs_.begin(), inputs_.end(),
                     [](const Input& in) { return in.info.ragged; });
}

std::int64_t NamedSplit::length(std::int64_t row) const {
  for (const Input& in : inputs_)
    if (in.info.ragged)
      return in.offsets[static_cast<std::size_t>(row + 1)] -
             in.offsets[static_cast<std::size_t>(row)];
  return 0;
}

torch::Tensor NamedSplit::fixed(const Input& in, const std::int64_t* rows, std::int64_t count,
                                const BatchForm& form) const {
  const InputInfo& info = in.info;
  std::vector<std::int64_t> shape{count};
  shape.insert(shape.end(), info.shape.begin(), info.shape.end());
  const std::int64_t n = info.sample_elements();
  const std::size_t element = input_type_size(info.type);
  if (info.integer()) {
    torch::Tensor out = torch::empty(shape, form.options(torch::kInt64));
    auto* o = out.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < count; ++i)
      for (std::int64_t k = 0; k < n; ++k)
        o[i * n + k] = id_at(in.data, info.type, rows[i] * n + k);
    return out;
  }
  if (form.raw) {  // as stored: the device converts and normalises (BatchNormaliser)
    torch::Tensor out = torch::empty(
        shape, form.options(info.type == InputType::u8 ? torch::kUInt8 : torch::kFloat32));
    auto* o = static_cast<std::uint8_t*>(out.data_ptr());
    const std::size_t row_bytes = static_cast<std::size_t>(n) * element;
    for (std::int64_t i = 0; i < count; ++i)
      std::memcpy(o + static_cast<std::size_t>(i) * row_bytes,
                  in.data.data() + static_cast<std::size_t>(rows[i]) * row_bytes, row_bytes);
    return out;
  }
  torch::Tensor out = torch::empty(shape, form.options(torch::kFloat32));
  float* o = out.data_ptr<float>();
  const std::int64_t channels =
      info.mean.size() > 1 ? static_cast<std::int64_t>(info.mean.size()) : 1;
  const std::int64_t inner = n / channels;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint8_t* src = in.data.data() + static_cast<std::size_t>(rows[i] * n) * element;
    for (std::int64_t k = 0; k < n; ++k) {
      float v = 0;
      if (info.type == InputType::u8)
        v = static_cast<float>(src[k]);
      else
        std::memcpy(&v, src + k * 4, 4);
      if (!info.mean.empty()) {
        const auto c = static_cast<std::size_t>(k / inner);
        v = (v - info.mean[c]) * scale_of(info, c);
      }
      o[i * n + k] = v;
    }
  }
  return out;
}

std::pair<torch::Tensor, torch::Tensor> NamedSplit::ragged(const Input& in,
                                                           const std::int64_t* rows,
                                                           std::int64_t count,
                                                           std::int64_t max_length,
                                                           const BatchForm& form) const {
  const InputInfo& info = in.info;
  if (info.row_size > 1) max_length = 0;  // rows (an image's patches) are never cut
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto r = static_cast<std::size_t>(rows[i]);
    std::int64_t len = in.offsets[r + 1] - in.offsets[r];
    if (max_length > 0) len = std::min(len, max_length);
    longest = std::max(longest, len);
  }
  const std::int64_t width = padded_length(longest, max_length);
  torch::Tensor mask = torch::zeros({count, width}, form.options(torch::kInt64));
  torch::Tensor values = info.integer()
                             ? torch::full({count, width}, info.pad_id, form.options(torch::kInt64))
                             : torch::zeros({count, width}, form.options(torch::kFloat32));
  auto* m = mask.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < count; ++i) {
    const auto r = static_cast<std::size_t>(rows[i]);
    const std::int64_t start = in.offsets[r];
    const std::int64_t len = std::min(in.offsets[r + 1] - start, width);
    for (std::int64_t k = 0; k < len; ++k) {
      m[i * width + k] = 1;
      if (info.integer()) {
        values.data_ptr<std::int64_t>()[i * width + k] = id_at(in.data, info.type, start + k);
        continue;
      }
      float v = 0;
      std::memcpy(&v, in.data.data() + (start + k) * 4, 4);
      if (!info.mean.empty() && !form.raw) v = (v - info.mean[0]) * scale_of(info, 0);
      values.data_ptr<float>()[i * width + k] = v;
    }
  }
  return {values, mask};
}

Batch NamedSplit::batch(const std::int64_t* rows, std::int64_t count, const BatchForm& form) const {
  Batch b;
  b.raw = form.raw;
  for (std::int64_t i = 0; i < count; ++i)
    if (length(rows[i]) > b.longest_length) {  // 0 without a ragged input
      b.longest_length = length(rows[i]);
      b.longest_row = rows[i];
    }
  try {
    for (const Input& in : inputs_) {
      if (!in.info.ragged) {
        b.inputs.emplace_back(in.info.name, fixed(in, rows, count, form));
        continue;
      }
      auto [values, mask] = ragged(in, rows, count, max_length_, form);
      b.inputs.emplace_back(in.info.name, values);
      b.inputs.emplace_back(mask_name(in.info.name), mask);
    }
  } catch (const std::exception& e) {
    if (!is_allocation_failure(e)) throw;
    refuse_batch("a batch", count, b.longest_row, b.longest_length, split_, e, remedy_);
  }
  b.y = torch::empty({count}, form.options(torch::kInt64));
  for (std::int64_t i = 0; i < count; ++i)
    b.y.data_ptr<std::int64_t>()[i] = y_[static_cast<std::size_t>(rows[i])];
  return b;
}

double NamedSplit::padding_fraction(const std::int64_t* rows, std::int64_t count) const {
  const std::int64_t max_length = max_length_;
  std::int64_t real = 0, longest = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t len = length(rows[i]);
    if (max_length > 0) len = std::min(len, max_length);
    real += len;
    longest = std::max(longest, len);
  }
  const std::int64_t total = count * padded_length(longest, max_length);
  return total > 0 ? 1.0 - static_cast<double>(real) / static_cast<double>(total) : 0.0;
}

}  // namespace slimtrain::data
