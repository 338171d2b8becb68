#include "slimtrain/ckpt/export_weights.hpp"

#include <hdf5.h>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/file_io.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::ckpt {

namespace {

// Owns an HDF5 identifier; `close` is H5Fclose, H5Dclose, ... as fits the kind.
class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  void close_checked(const std::string& context) {
    const hid_t id = id_;
    id_ = -1;
    SLIMTRAIN_CHECK_HDF5(close_(id), context);
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void write_string_attribute(hid_t object, const char* name, const std::string& value,
                            const std::string& context) {
  Hid type(SLIMTRAIN_CHECK_HDF5(H5Tcopy(H5T_C_S1), context), H5Tclose);
  SLIMTRAIN_CHECK_HDF5(H5Tset_size(type.get(), H5T_VARIABLE), context);
  SLIMTRAIN_CHECK_HDF5(H5Tset_cset(type.get(), H5T_CSET_UTF8), context);
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Screate(H5S_SCALAR), context), H5Sclose);
  Hid attr(
      SLIMTRAIN_CHECK_HDF5(
          H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), context),
      H5Aclose);
  const char* text = value.c_str();
  SLIMTRAIN_CHECK_HDF5(H5Awrite(attr.get(), type.get(), &text), context);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value,
                         const std::string& context) {
  Hid space(SLIMTRAIN_CHECK_HDF5(H5Screate(H5S_SCALAR), context), H5Sclose);
  Hid attr(
      SLIMTRAIN_CHECK_HDF5(
          H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), context),
      H5Aclose);
  SLIMTRAIN_CHECK_HDF5(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), context);
}

// The tensor as it will be stored, with its HDF5 file and memory types.
struct Stored {
  torch::Tensor tensor;
  hid_t file_type;
  hid_t mem_type;
};

Stored storable(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat64:
      return {t, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case torch::kFloat32:
      return {t, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case torch::kFloat16:
    case torch::kBFloat16:
      return {t.to(torch::kFloat32), H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case torch::kInt64:
      return {t, H5T_STD_I64LE, H5T_NATIVE_INT64};
    case torch::kInt32:
      return {t, H5T_STD_I32LE, H5T_NATIVE_INT32};
    case torch::kInt16:
      return {t, H5T_STD_I16LE, H5T_NATIVE_INT16};
    case torch::kInt8:
      return {t, H5T_STD_I8LE, H5T_NATIVE_INT8};
    case torch::kUInt8:
      return {t, H5T_STD_U8LE, H5T_NATIVE_UINT8};
    case torch::kBool:
      return {t.to(torch::kUInt8), H5T_STD_U8LE, H5T_NATIVE_UINT8};
    default:
      break;
  }
  SLIMTRAIN_THROW(DataError, "cannot export dtype ", t.scalar_type());
}

void write_file(const std::string& path, const CheckpointState& state, const std::string& source) {
  const std::string context = "export to " + path;
  Hid file(SLIMTRAIN_CHECK_HDF5(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                                context),
           H5Fclose);
  const std::string prefix = "model/";
  int written = 0;
  for (const TensorEntry& entry : state.tensors) {
    if (entry.name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = entry.name.substr(prefix.size());
    const std::string where = context + ", dataset /" + name;
    const Stored s = storable(entry.tensor.contiguous());
    const torch::Tensor data = s.tensor.contiguous();
    std::vector<hsize_t> dims(data.sizes().begin(), data.sizes().end());
    Hid space(SLIMTRAIN_CHECK_HDF5(dims.empty() ? H5Screate(H5S_SCALAR)
                                                : H5Screate_simple(static_cast<int>(dims.size()),
                                                                   dims.data(), nullptr),
                                   where),
              H5Sclose);
    Hid dataset(SLIMTRAIN_CHECK_HDF5(H5Dcreate2(file.get(), ("/" + name).c_str(), s.file_type,
                                                space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                     where),
                H5Dclose);
    if (data.numel() > 0)
      SLIMTRAIN_CHECK_HDF5(
          H5Dwrite(dataset.get(), s.mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data_ptr()),
          where);
    if (entry.tensor.scalar_type() != data.scalar_type())
      write_string_attribute(dataset.get(), "checkpoint_dtype",
                             dtype_name(entry.tensor.scalar_type()), where);
    ++written;
  }
  if (written == 0)
    SLIMTRAIN_THROW(DataError, source, ": the checkpoint holds no model/ tensors to export");

  const nlohmann::json& meta = state.meta;
  nlohmann::json spec = meta;
  for (const char* key : {"model", "model_spec"})
    if (meta.is_object() && meta.contains(key)) spec = meta[key];
  write_string_attribute(file.get(), "model_spec", spec.dump(), context);
  write_string_attribute(file.get(), "format", "slimtrain-weights", context);
  write_string_attribute(file.get(), "source_checkpoint", source, context);
  write_int_attribute(file.get(), "step", state.step, context);
  SLIMTRAIN_CHECK_HDF5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), context);
  file.close_checked(context);
}

}  // namespace

std::string export_weights(const std::string& checkpoint, const std::string& output, bool force) {
  const std::string dir = CheckpointManager::resolve(checkpoint, "--checkpoint");
  const CheckpointState state = read_checkpoint(dir);
  // HDF5's own stack dump would bury the one-line error SLIMTRAIN_CHECK_HDF5 already gives.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  write_file_atomically(output, force, "-o",
                        [&](const std::string& tmp) { write_file(tmp, state, dir); });
  return dir;
}

}  // namespace slimtrain::ckpt
