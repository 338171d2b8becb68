#include "slimtrain/ckpt/export_weights.hpp"

#include <hdf5.h>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::ckpt {

namespace {

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

nlohmann::json model_spec_of(const CheckpointState& state) {
  const nlohmann::json& meta = state.meta;
  nlohmann::json spec = meta;
  for (const char* key : {"model", "model_spec"})
    if (meta.is_object() && meta.contains(key)) spec = meta[key];
  return spec;
}

// safetensors: every model/ tensor under its parameter name, in its stored dtype (bf16 stays
// bf16), with the metadata transformers' save_pretrained writes ("format": "pt") and slimtrain's.
void write_safetensors_file(const std::string& path, const CheckpointState& state,
                            const std::string& source) {
  const std::string prefix = "model/";
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const TensorEntry& entry : state.tensors)
    if (entry.name.compare(0, prefix.size(), prefix) == 0)
      tensors.emplace_back(entry.name.substr(prefix.size()), entry.tensor);
  if (tensors.empty())
    SLIMTRAIN_THROW(DataError, source, ": the checkpoint holds no model/ tensors to export");
  write_safetensors(path, tensors,
                    {{"format", "pt"},
                     {"model_spec", model_spec_of(state).dump()},
                     {"source_checkpoint", source},
                     {"step", std::to_string(state.step)}});
}

bool is_safetensors(const std::string& path) {
  const std::string ext = ".safetensors";
  return path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

void write_file(const std::string& path, const CheckpointState& state, const std::string& source) {
  const std::string context = "export to " + path;
  std::lock_guard<std::recursive_mutex> lock(data::hdf5_mutex());
  data::Hid file(SLIMTRAIN_CHECK_HDF5(
      H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), context));
  const std::string prefix = "model/";
  int written = 0;
  for (const TensorEntry& entry : state.tensors) {
    if (entry.name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = entry.name.substr(prefix.size());
    const std::string where = context + ", dataset /" + name;
    const Stored s = storable(entry.tensor.contiguous());
    const torch::Tensor data = s.tensor.contiguous();
    std::vector<hsize_t> dims(data.sizes().begin(), data.sizes().end());
    data::Hid space(SLIMTRAIN_CHECK_HDF5(
        dims.empty() ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
        where));
    data::Hid dataset(SLIMTRAIN_CHECK_HDF5(H5Dcreate2(file, ("/" + name).c_str(), s.file_type,
                                                      space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                           where));
    if (data.numel() > 0)
      SLIMTRAIN_CHECK_HDF5(
          H5Dwrite(dataset, s.mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data_ptr()), where);
    if (entry.tensor.scalar_type() != data.scalar_type())
      data::write_string_attribute(dataset, "checkpoint_dtype",
                                   {dtype_name(entry.tensor.scalar_type())}, true);
    ++written;
  }
  if (written == 0)
    SLIMTRAIN_THROW(DataError, source, ": the checkpoint holds no model/ tensors to export");

  data::write_string_attribute(file, "model_spec", {model_spec_of(state).dump()}, true);
  data::write_string_attribute(file, "format", {"slimtrain-weights"}, true);
  data::write_string_attribute(file, "source_checkpoint", {source}, true);
  data::write_int_attribute(file, "step", state.step);
  SLIMTRAIN_CHECK_HDF5(H5Fflush(file, H5F_SCOPE_GLOBAL), context);
  file.close_checked(context);
}

}  // namespace

std::string export_weights(const std::string& checkpoint, const std::string& output, bool force) {
  const std::string dir = CheckpointManager::resolve(checkpoint, "--checkpoint");
  const CheckpointState state = read_checkpoint(dir);
  if (state.meta.is_object() && state.meta.contains("lora_base"))
    SLIMTRAIN_THROW(ConfigError, "-o: checkpoint ", dir,
                    " holds LoRA adapters without their base model: export them with --hf (PEFT's "
                    "adapter format) or --hf --merge-lora (the merged model)");
  // HDF5's own stack dump would bury the one-line error SLIMTRAIN_CHECK_HDF5 already gives.
  data::silence_hdf5_errors();
  files::write_file_atomically(output, force, "-o", [&](const std::string& tmp) {
    if (is_safetensors(output))
      write_safetensors_file(tmp, state, dir);
    else
      write_file(tmp, state, dir);
  });
  return dir;
}

}  // namespace slimtrain::ckpt
