#include "slimtrain/cli/prep_job.hpp"

#include <algorithm>
#include <cmath>

#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/data/shard.hpp"

namespace slimtrain::cli {

using namespace data;  // the layout, the readers and the HDF5 helpers this job writes with
namespace {

// One output split: which source rows it holds, and this rank's converted slice of them.
struct SplitBuffer {
  std::string name;
  const RecordSource* source = nullptr;
  std::vector<std::int64_t> rows;  // source indices, in output order
  Range mine{0, 0};                // this rank's output rows (after skipped records)
  std::vector<std::uint8_t> x;
  std::vector<std::int64_t> y;
  std::vector<std::int64_t> local_rows;  // the source row of each of x's samples
  std::int64_t total = 0;                // output rows over all ranks
  std::vector<std::string> skipped;      // --skip-bad: "record: why", this rank's
};

// Converts this rank's share of the rows; with skip_bad a record that throws DataError is left
// out and noted instead of ending the job.
void convert(SplitBuffer& split, const Range& share, bool skip_bad) {
  const RecordSource& source = *split.source;
  const std::size_t sample_bytes =
      static_cast<std::size_t>(source.sample_elements()) * element_size(source.element_type());
  const std::int64_t count = share.end - share.begin;
  split.x.resize(static_cast<std::size_t>(count) * sample_bytes);
  split.y.clear();
  split.local_rows.clear();
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t row = split.rows[static_cast<std::size_t>(share.begin + i)];
    try {
      const std::int64_t label = source.read(row, split.x.data() + split.y.size() * sample_bytes);
      split.y.push_back(label);
      split.local_rows.push_back(row);
    } catch (const DataError& e) {
      if (!skip_bad) throw;
      split.skipped.push_back(e.what());
    }
  }
  split.x.resize(split.y.size() * sample_bytes);
}

// Every rank's kept count: this rank's output rows and the split's total.
void place(comm::ControlPlane& control, SplitBuffer& split) {
  const std::vector<std::int64_t> counts =
      control.all_gather({static_cast<std::int64_t>(split.y.size())});
  std::int64_t offset = 0;
  split.total = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    if (r < control.rank()) offset += counts[static_cast<std::size_t>(r)];
    split.total += counts[static_cast<std::size_t>(r)];
  }
  split.mine = {offset, offset + static_cast<std::int64_t>(split.y.size())};
}

// --skip-bad: every rank's notes, in rank order, on every rank.
std::vector<std::string> gather_skipped(comm::ControlPlane& control,
                                        const std::vector<SplitBuffer>& splits) {
  std::string mine;
  for (const SplitBuffer& s : splits)
    for (const std::string& note : s.skipped) mine += note + "\n";
  return gather_lines(control, mine);
}

// Every label of this rank's slice against [0, num_classes).
void check_labels(const SplitBuffer& split, std::int64_t num_classes) {
  for (std::size_t i = 0; i < split.y.size(); ++i) {
    if (split.y[i] >= num_classes) {
      SLIMTRAIN_THROW(DataError, split.source->describe_record(split.local_rows[i]), " has label ",
                      split.y[i], ", outside [0, ", num_classes, ") (--num-classes)");
    }
  }
}

void write_split(hid_t file, const SplitBuffer& split, const RowWriter& rows,
                 const std::vector<float>& mean, const std::vector<float>& std) {
  const RecordSource& source = *split.source;
  const ElementType type = source.element_type();
  const auto n = static_cast<hsize_t>(split.total);
  const std::size_t sample_bytes =
      static_cast<std::size_t>(source.sample_elements()) * element_size(type);
  Hid group(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(file, split.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), rows.where()));
  std::vector<hsize_t> x_dims{n};
  for (std::int64_t d : source.sample_shape()) x_dims.push_back(static_cast<hsize_t>(d));
  const bool u8 = type == ElementType::kUint8;
  const std::int64_t begin = split.mine.begin, count = split.mine.end - split.mine.begin;
  Hid x = rows.create(group, "x", u8 ? H5T_STD_U8LE : H5T_IEEE_F32LE, x_dims, sample_bytes);
  rows.write_rows(x, u8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_FLOAT, begin, count, split.x.data());
  write_float_attribute(x, "mean", mean);
  write_float_attribute(x, "std", std);
  Hid y = rows.create(group, "y", H5T_STD_I64LE, {n}, sizeof(std::int64_t));
  rows.write_rows(y, H5T_NATIVE_INT64, begin, count, split.y.data());
}

}  // namespace

void train_val_rows(std::int64_t n, const PrepOptions& options, std::vector<std::int64_t>& train,
                    std::vector<std::int64_t>& val) {
  const auto n_val = static_cast<std::int64_t>(std::llround(options.val_fraction * double(n)));
  if (n_val >= n)
    SLIMTRAIN_THROW(ConfigError, "--val-fraction: ", options.val_fraction,
                    " leaves no training samples");
  train.clear();
  val.clear();
  if (n_val > 0) {
    std::vector<std::int64_t> order = permutation(n, options.seed, 0);
    val.assign(order.begin(), order.begin() + n_val);
    train.assign(order.begin() + n_val, order.end());
    std::sort(val.begin(), val.end());  // stored in source order: easy to compare
    std::sort(train.begin(), train.end());
  } else {
    train.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) train[static_cast<std::size_t>(i)] = i;
  }
}

PrepResult prepare_dataset(comm::ControlPlane& control, MPI_Comm io_comm, const RecordSource& train,
                           const RecordSource* test, const PrepOptions& options) {
  const int rank = control.rank(), size = control.size();
  using comm::on_all_ranks;

  check_class_options(options);
  check_output(control, options);
  if (test && test->sample_shape() != train.sample_shape()) {
    SLIMTRAIN_THROW(DataError, test->describe(), ": sample shape differs from ", train.describe());
  }
  if (test && test->element_type() != train.element_type()) {
    SLIMTRAIN_THROW(DataError, test->describe(), ": element type differs from ", train.describe());
  }
  if (train.size() == 0) SLIMTRAIN_THROW(DataError, train.describe(), ": no training samples");
  if (train.sample_shape().size() > 3) {
    SLIMTRAIN_THROW(DataError, train.describe(), ": samples have ", train.sample_shape().size(),
                    " dimensions; at most 3 ([C, H, W]) are supported");
  }

  std::vector<SplitBuffer> splits;
  {
    SplitBuffer t, v;
    t.name = "train";
    v.name = "val";
    t.source = v.source = &train;
    train_val_rows(train.size(), options, t.rows, v.rows);
    splits.push_back(std::move(t));
    if (!v.rows.empty()) splits.push_back(std::move(v));
    if (test) {
      if (test->size() == 0) SLIMTRAIN_THROW(DataError, test->describe(), ": no test samples");
      SplitBuffer s;
      s.name = "test";
      s.source = test;
      s.rows.resize(static_cast<std::size_t>(test->size()));
      for (std::int64_t i = 0; i < test->size(); ++i) s.rows[static_cast<std::size_t>(i)] = i;
      splits.push_back(std::move(s));
    }
  }
  std::int64_t local_max = -1;
  on_all_ranks(control, [&] {
    for (SplitBuffer& s : splits) {
      convert(s, eval_share(static_cast<std::int64_t>(s.rows.size()), rank, size),
              options.skip_bad);
      for (std::int64_t label : s.y) local_max = std::max(local_max, label);
    }
  });
  for (SplitBuffer& s : splits) place(control, s);
  PrepResult result;
  if (options.skip_bad) result.skipped = gather_skipped(control, splits);
  for (const SplitBuffer& s : splits)
    if (s.total == 0 && !result.skipped.empty())  // only --skip-bad can empty a split
      SLIMTRAIN_THROW(DataError, s.source->describe(), ": every record of /", s.name,
                      " was skipped as bad (--skip-bad); the first: ", result.skipped.front());
  const std::int64_t max_label =
      control.all_reduce(std::vector<std::int64_t>{local_max}, comm::ReduceOp::max).front();

  result.num_classes = options.num_classes > 0 ? options.num_classes
                       : !options.class_names.empty()
                           ? static_cast<std::int64_t>(options.class_names.size())
                           : max_label + 1;
  on_all_ranks(control, [&] {
    for (const SplitBuffer& s : splits) check_labels(s, result.num_classes);
  });
  std::vector<std::string> class_names = options.class_names;
  for (std::int64_t c = static_cast<std::int64_t>(class_names.size()); c < result.num_classes; ++c)
    class_names.push_back(std::to_string(c));

  const std::int64_t channels = channels_of(train.sample_shape());
  ChannelMoments moments(channels, train.sample_elements() / channels);
  moments.add(splits[0].x.data(), static_cast<std::int64_t>(splits[0].y.size()),
              train.element_type());
  moments.sums() = control.all_reduce(moments.sums(), comm::ReduceOp::sum);
  moments.finish(splits[0].total, result.mean, result.std);
  if (!options.fixed_mean.empty()) {  // the checkpoint's own normalisation (--preprocessor)
    result.mean = options.fixed_mean;
    result.std = options.fixed_std;
  }
  for (const SplitBuffer& s : splits) {
    const std::int64_t n = s.total;
    (s.name == "train" ? result.train : s.name == "val" ? result.val : result.test) = n;
  }

  write_output_atomically(control, io_comm, options, [&](hid_t file, const RowWriter& rows) {
    write_string_attribute(file, "format", {kFormatName}, true);
    write_int_attribute(file, "format_version", kFormatVersion);
    write_int_attribute(file, "num_classes", result.num_classes);
    write_class_names(file, class_names, control.rank() == 0);
    for (const SplitBuffer& s : splits) write_split(file, s, rows, result.mean, result.std);
  });
  return result;
}

}  // namespace slimtrain::cli
