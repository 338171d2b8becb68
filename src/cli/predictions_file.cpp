#include "slimtrain/cli/predictions_file.hpp"

#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"

namespace slimtrain::cli {

namespace {

PrepOptions output_options(const PredictionsFile& file) {
  PrepOptions o;
  o.output = file.path;
  o.force = file.force;
  o.io_timeout_s = file.io_timeout_s;
  return o;
}

}  // namespace

void check_predictions_output(comm::ControlPlane& control, const PredictionsFile& file) {
  check_output(control, output_options(file), "--predictions");
}

void write_predictions(comm::ControlPlane& control, MPI_Comm io_comm, const PredictionsFile& file,
                       const eval::ShardPredictions& mine) {
  const auto classes = static_cast<std::int64_t>(file.class_names.size());
  const torch::Tensor logits = mine.logits.to(torch::kFloat32).contiguous();
  const torch::Tensor predicted = logits.size(0) > 0
                                      ? logits.argmax(1).to(torch::kInt64).contiguous()
                                      : torch::zeros({0}, torch::kInt64);
  const torch::Tensor labels = mine.labels.to(torch::kInt64).contiguous();
  const std::int64_t count = logits.size(0);
  write_output_atomically(
      control, io_comm, output_options(file), [&](hid_t out, const RowWriter& rows) {
        const auto n = static_cast<hsize_t>(file.rows);
        data::Hid logits_set =
            rows.create(out, "logits", H5T_IEEE_F32LE, {n, static_cast<hsize_t>(classes)},
                        sizeof(float) * static_cast<std::size_t>(classes));
        rows.write_rows(logits_set, H5T_NATIVE_FLOAT, mine.first_row, count, logits.data_ptr());
        data::Hid predicted_set =
            rows.create(out, "predicted", H5T_STD_I64LE, {n}, sizeof(std::int64_t));
        rows.write_rows(predicted_set, H5T_NATIVE_INT64, mine.first_row, count,
                        predicted.data_ptr());
        data::Hid labels_set = rows.create(out, "labels", H5T_STD_I64LE, {n}, sizeof(std::int64_t));
        rows.write_rows(labels_set, H5T_NATIVE_INT64, mine.first_row, count, labels.data_ptr());
        data::write_string_attribute(out, "split", {file.split}, true);
        data::write_string_attribute(out, "checkpoint", {file.checkpoint}, true);
        data::write_int_attribute(out, "step", file.step);
        data::write_int_attribute(out, "num_classes", classes);
        data::write_class_names(out, file.class_names, control.rank() == 0);
      });
}

}  // namespace slimtrain::cli
