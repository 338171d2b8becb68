#include "slimtrain/cli/embed_job.hpp"

#include <array>
#include <mutex>

#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/data/eval_loader.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_handle.hpp"
#include "slimtrain/data/hdf5_rows.hpp"
#include "slimtrain/data/layout_probe.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
#include "slimtrain/runtime/heap.hpp"

namespace slimtrain::cli {
namespace {

// Appends row blocks to a fixed-size 2-D (or 1-D) dataset, so memory stays one batch.
class BlockAppender {
 public:
  BlockAppender(hid_t file, const std::string& name, hid_t file_type, std::int64_t rows,
                std::int64_t cols, const std::string& where)
      : where_(where + ", dataset /" + name) {
    const std::array<hsize_t, 2> dims{static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
    const int rank = cols > 0 ? 2 : 1;
    data::Hid space(SLIMTRAIN_CHECK_HDF5(H5Screate_simple(rank, dims.data(), nullptr), where_));
    dataset_ = data::Hid(SLIMTRAIN_CHECK_HDF5(
        H5Dcreate2(file, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        where_));
  }

  void write(const torch::Tensor& block, hid_t mem_type) {
    const torch::Tensor rows = block.contiguous();
    const std::int64_t n = rows.size(0);
    if (n == 0) return;
    data::write_rows(dataset_, mem_type, next_row_, n, rows.data_ptr(), where_);
    next_row_ += n;
  }

  hid_t get() const { return dataset_; }

 private:
  std::string where_;
  data::Hid dataset_;
  std::int64_t next_row_ = 0;
};

}  // namespace

std::int64_t run_embed_job(const EmbedJobConfig& c) {
  data::probe_data_file(c.data, data::ProbeOptions{});  // first: before any thread starts
  runtime::keep_freed_memory();
  if (c.threads > 0) torch::set_num_threads(c.threads);
  const data::DatasetInfo info = data::read_dataset_info(c.data);
  if (!info.has_split(c.split))
    SLIMTRAIN_THROW(ConfigError, "--split: ", c.data, " has no split '", c.split, "'");
  if (info.named())
    SLIMTRAIN_THROW(ConfigError, "--embeddings: ", c.data, " has named inputs (",
                    data::describe_inputs(info.inputs),
                    "); embeddings are exported from files of one input x (layout 1)");
  const eval::CheckpointModel loaded = eval::load_checkpoint_model(
      eval::resolve_checkpoint(c.checkpoint), info, ckpt::VerifyDepth::checksums, c.model);
  model::ClassifierImpl& net = *loaded.model;
  net.eval();
  torch::NoGradGuard no_grad;

  // One process reads the whole split in row order: rank 0 of a world of 1.
  data::EvalLoader loader(c.data, c.split, 0, 1, c.batch_size);
  const std::int64_t rows = loader.global_count();
  const std::int64_t width = net.embedding_dim();
  files::write_file_atomically(c.output, c.force, "-o", [&](const std::string& tmp) {
    const std::string where = "export --embeddings to " + c.output;
    std::lock_guard<std::recursive_mutex> lock(data::hdf5_mutex());
    data::silence_hdf5_errors();
    data::Hid file(SLIMTRAIN_CHECK_HDF5(
        H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), where));
    BlockAppender features(file, "/embeddings", H5T_IEEE_F32LE, rows, width, where);
    BlockAppender labels(file, "/labels", H5T_STD_I64LE, rows, 0, where);
    data::Batch batch;
    while (loader.next(batch)) {
      const torch::Tensor f = net.embed(batch.x).to(torch::kFloat32);
      if (f.dim() != 2 || f.size(1) != width)
        SLIMTRAIN_THROW(Error, "embed() returned ", f.sizes(), ", expected [B, ", width, "]");
      features.write(f, H5T_NATIVE_FLOAT);
      labels.write(batch.y.to(torch::kInt64), H5T_NATIVE_INT64);
    }
    data::write_string_attribute(file, "format", {"slimtrain-embeddings"}, true);
    data::write_string_attribute(file, "model_spec", {net.spec().to_json().dump()}, true);
    data::write_string_attribute(file, "source_checkpoint", {loaded.checkpoint}, true);
    data::write_string_attribute(file, "split", {c.split}, true);
    data::write_class_names(file, info.class_names);
    data::write_int_attribute(file, "step", loaded.step);
    SLIMTRAIN_CHECK_HDF5(H5Fflush(file, H5F_SCOPE_GLOBAL), where);
  });
  return rows;
}

std::string run_script_export(const EmbedJobConfig& c) {
  const eval::CheckpointModel loaded =
      eval::load_checkpoint_model(eval::resolve_checkpoint(c.checkpoint), c.model);
  files::write_file_atomically(c.output, c.force, "-o",
                               [&](const std::string& tmp) { loaded.model->save_script(tmp); });
  return loaded.checkpoint;
}

}  // namespace slimtrain::cli
