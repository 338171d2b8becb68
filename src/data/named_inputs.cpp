#include "slimtrain/data/named_inputs.hpp"

#include <cmath>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_handle.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::data {
namespace {

InputType type_of(hid_t dataset, const std::string& where, bool allow_u8) {
  Hid type(SLIMTRAIN_CHECK_HDF5(H5Dget_type(dataset), where));
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  const bool is_signed = cls == H5T_INTEGER && H5Tget_sign(type) != H5T_SGN_NONE;
  if (allow_u8 && cls == H5T_INTEGER && size == 1 && !is_signed) return InputType::u8;
  if (cls == H5T_INTEGER && size == 4 && is_signed) return InputType::i32;
  if (cls == H5T_INTEGER && size == 8 && is_signed) return InputType::i64;
  if (cls == H5T_FLOAT && size == 4) return InputType::f32;
  SLIMTRAIN_THROW(DataError, where, ": dtype must be ",
                  allow_u8 ? "uint8, int32, int64 or float32" : "int32, int64 or float32");
}

// pad_id, vocab_size, mean and std of an input (on its dataset or group).
void read_attributes(hid_t object, const std::string& where, InputInfo& in) {
  if (has_attribute(object, "pad_id", where))
    in.pad_id = read_int_attribute(object, "pad_id", where);
  if (has_attribute(object, "row_size", where)) {
    in.row_size = read_int_attribute(object, "row_size", where);
    if (!in.ragged || in.row_size < 1)
      SLIMTRAIN_THROW(DataError, where, ": row_size ", in.row_size,
                      " (values per row) belongs on a ragged input and is at least 1");
  }
  if (has_attribute(object, "vocab_size", where)) {
    in.vocab_size = read_int_attribute(object, "vocab_size", where);
    if (!in.integer() || in.vocab_size < 1)
      SLIMTRAIN_THROW(DataError, where, ": vocab_size ", in.vocab_size,
                      " needs integer ids and a positive size");
  }
  const bool has_mean = has_attribute(object, "mean", where);
  if (has_mean != has_attribute(object, "std", where))
    SLIMTRAIN_THROW(DataError, where, ": give both mean and std attributes, or neither");
  if (!has_mean) return;
  if (in.integer())
    SLIMTRAIN_THROW(DataError, where, ": mean/std on ", input_type_name(in.type),
                    " values: token ids are never normalised (float and uint8 inputs only)");
  in.mean = read_float_attribute(object, "mean", where);
  in.std = read_float_attribute(object, "std", where);
  const std::size_t channels =
      in.ragged || in.shape.empty() ? 1 : static_cast<std::size_t>(in.shape[0]);
  if (in.mean.size() != in.std.size() || (in.mean.size() != 1 && in.mean.size() != channels))
    SLIMTRAIN_THROW(DataError, where, ": mean/std have ", in.mean.size(), "/", in.std.size(),
                    " values; give one, or one per channel (", channels, ")");
  for (std::size_t c = 0; c < in.mean.size(); ++c)
    if (!std::isfinite(in.mean[c]) || !std::isfinite(in.std[c]) || in.std[c] < 0)
      SLIMTRAIN_THROW(DataError, where, ": mean/std value ", c, " is not finite or std < 0");
}

}  // namespace

const char* input_type_name(InputType type) {
  switch (type) {
    case InputType::u8:
      return "uint8";
    case InputType::i32:
      return "int32";
    case InputType::i64:
      return "int64";
    case InputType::f32:
      break;
  }
  return "float32";
}

std::size_t input_type_size(InputType type) {
  return type == InputType::u8 ? 1 : type == InputType::i64 ? 8 : 4;
}

std::int64_t InputInfo::sample_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string mask_name(const std::string& input) {
  return input == "input_ids" ? "attention_mask" : input + "_mask";
}

std::vector<InputInfo> read_split_inputs(hid_t file, const std::string& path,
                                         const std::string& split, std::int64_t rows) {
  const std::string group_name = "/" + split + "/inputs";
  if (H5Lexists(file, group_name.c_str(), H5P_DEFAULT) <= 0)
    SLIMTRAIN_THROW(DataError, path, ": missing group ", group_name,
                    " (format_version 2 keeps a split's inputs there)");
  Hid group(SLIMTRAIN_CHECK_HDF5(H5Gopen2(file, group_name.c_str(), H5P_DEFAULT),
                                 path + ": " + group_name));
  H5G_info_t g{};
  SLIMTRAIN_CHECK_HDF5(H5Gget_info(group, &g), path + ": " + group_name);
  std::vector<InputInfo> inputs;
  for (hsize_t i = 0; i < g.nlinks; ++i) {
    char name[256] = {};
    SLIMTRAIN_CHECK_HDF5(H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name,
                                            sizeof name, H5P_DEFAULT),
                         path + ": " + group_name);
    InputInfo in;
    in.name = name;
    const std::string object = group_name + "/" + in.name, where = path + ": " + object;
    H5O_info_t o{};
    SLIMTRAIN_CHECK_HDF5(H5Oget_info_by_name(file, object.c_str(), &o, H5P_DEFAULT), where);
    if (in.name == "labels")
      SLIMTRAIN_THROW(DataError, where, ": 'labels' is the name of /", split, "/y");
    note_hdf5_read(where, ": shape, dtype and attributes");
    if (o.type == H5O_TYPE_GROUP) {
      in.ragged = true;
      Hid values = open_dataset(file, path, object + "/values");
      Hid offsets = open_dataset(file, path, object + "/offsets");
      const auto vd = dataset_dims(values, where + "/values");
      const auto od = dataset_dims(offsets, where + "/offsets");
      if (vd.size() != 1)
        SLIMTRAIN_THROW(DataError, where, "/values: must be 1-D (sequences end to end)");
      if (od.size() != 1 || od[0] != static_cast<hsize_t>(rows + 1))
        SLIMTRAIN_THROW(
            DataError, where, "/offsets: must be int64 [", rows + 1, "] for ", rows,
            " samples (one more than the rows: where each sequence starts, then the end)");
      if (type_of(offsets, where + "/offsets", false) != InputType::i64)
        SLIMTRAIN_THROW(DataError, where, "/offsets: dtype must be int64");
      in.type = type_of(values, where + "/values", false);
      Hid own(SLIMTRAIN_CHECK_HDF5(H5Gopen2(file, object.c_str(), H5P_DEFAULT), where));
      read_attributes(own, where, in);
    } else {
      Hid data = open_dataset(file, path, object);
      const auto dims = dataset_dims(data, where);
      if (dims.empty() || dims[0] != static_cast<hsize_t>(rows))
        SLIMTRAIN_THROW(DataError, where, ": must hold ", rows, " samples (as /", split, "/y)");
      in.shape.assign(dims.begin() + 1, dims.end());
      for (std::int64_t d : in.shape)
        if (d < 1) SLIMTRAIN_THROW(DataError, where, ": a sample dimension is empty");
      in.type = type_of(data, where, true);
      read_attributes(data, where, in);
    }
    inputs.push_back(std::move(in));
  }
  if (inputs.empty()) SLIMTRAIN_THROW(DataError, path, ": ", group_name, " holds no input");
  return inputs;
}

std::string describe_inputs(const std::vector<InputInfo>& inputs) {
  std::string out;
  for (const InputInfo& in : inputs) {
    out += (out.empty() ? "" : ", ") + in.name + " " + input_type_name(in.type);
    if (in.ragged) {
      out += " ragged";
      continue;
    }
    out += " [";
    for (std::size_t i = 0; i < in.shape.size(); ++i)
      out += (i ? ", " : "") + std::to_string(in.shape[i]);
    out += "]";
  }
  return out;
}

}  // namespace slimtrain::data
