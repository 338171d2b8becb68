#include "slimtrain/cli/prep_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/fault_injection.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_handle.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/data/shard.hpp"
#include "slimtrain/runtime/job_exit.hpp"
#include "slimtrain/runtime/watchdog.hpp"

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
  std::vector<std::string> all;
  std::string mine;
  for (const SplitBuffer& s : splits)
    for (const std::string& note : s.skipped) mine += note + "\n";
  for (int r = 0; r < control.size(); ++r) {
    std::istringstream theirs(control.broadcast(control.rank() == r ? mine : std::string(), r));
    for (std::string line; std::getline(theirs, line);) all.push_back(line);
  }
  return all;
}

// Per-channel sums over this rank's train slice: [sum_0..sum_C-1, sumsq_0..sumsq_C-1].
void check_labels(const SplitBuffer& split, std::int64_t num_classes) {
  for (std::size_t i = 0; i < split.y.size(); ++i) {
    if (split.y[i] >= num_classes) {
      SLIMTRAIN_THROW(DataError, split.source->describe_record(split.local_rows[i]), " has label ",
                      split.y[i], ", outside [0, ", num_classes, ") (--num-classes)");
    }
  }
}

void write_split(hid_t file, const SplitBuffer& split, const PrepOptions& options,
                 const std::vector<float>& mean, const std::vector<float>& std, bool parallel,
                 const std::string& where) {
  const RecordSource& source = *split.source;
  const ElementType type = source.element_type();
  const std::vector<std::int64_t>& shape = source.sample_shape();
  const auto n = static_cast<hsize_t>(split.total);
  const std::size_t sample_bytes =
      static_cast<std::size_t>(source.sample_elements()) * element_size(type);

  Hid group(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(file, split.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), where));
  Hid transfer(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_DATASET_XFER), where));
  if (parallel) SLIMTRAIN_CHECK_HDF5(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE), where);

  auto create = [&](const char* name, hid_t file_type, std::vector<hsize_t> dims,
                    std::size_t row_bytes) {
    Hid space(SLIMTRAIN_CHECK_HDF5(
        H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), where));
    Hid plist(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_DATASET_CREATE), where));
    std::vector<hsize_t> chunk = dims;
    chunk[0] = std::clamp<hsize_t>(options.chunk_bytes / std::max<std::size_t>(row_bytes, 1), 1, n);
    SLIMTRAIN_CHECK_HDF5(H5Pset_chunk(plist, static_cast<int>(chunk.size()), chunk.data()), where);
    SLIMTRAIN_CHECK_HDF5(H5Pset_fill_time(plist, H5D_FILL_TIME_NEVER), where);
    if (options.compress > 0) {
      SLIMTRAIN_CHECK_HDF5(H5Pset_shuffle(plist), where);
      SLIMTRAIN_CHECK_HDF5(H5Pset_deflate(plist, static_cast<unsigned>(options.compress)), where);
    }
    return Hid(SLIMTRAIN_CHECK_HDF5(
        H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, plist, H5P_DEFAULT),
        where + "/" + split.name + "/" + name));
  };
  auto write_rows = [&](hid_t dataset, hid_t memory_type, const void* data) {
    Hid file_space(SLIMTRAIN_CHECK_HDF5(H5Dget_space(dataset), where));
    const int rank = H5Sget_simple_extent_ndims(file_space);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(file_space, dims.data(), nullptr);
    std::vector<hsize_t> start(dims.size(), 0);
    start[0] = static_cast<hsize_t>(split.mine.begin);
    dims[0] = static_cast<hsize_t>(split.mine.end - split.mine.begin);
    Hid memory_space(SLIMTRAIN_CHECK_HDF5(H5Screate_simple(rank, dims.data(), nullptr), where));
    if (dims[0] == 0) {
      H5Sselect_none(file_space);
      H5Sselect_none(memory_space);
    } else {
      SLIMTRAIN_CHECK_HDF5(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr,
                                               dims.data(), nullptr),
                           where);
    }
    SLIMTRAIN_CHECK_HDF5(H5Dwrite(dataset, memory_type, memory_space, file_space, transfer, data),
                         where + "/" + split.name);
  };

  std::vector<hsize_t> x_dims{n};
  for (std::int64_t d : shape) x_dims.push_back(static_cast<hsize_t>(d));
  const bool u8 = type == ElementType::kUint8;
  Hid x = create("x", u8 ? H5T_STD_U8LE : H5T_IEEE_F32LE, x_dims, sample_bytes);
  write_rows(x, u8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_FLOAT, split.x.data());
  write_float_attribute(x, "mean", mean);
  write_float_attribute(x, "std", std);
  Hid y = create("y", H5T_STD_I64LE, {n}, sizeof(std::int64_t));
  write_rows(y, H5T_NATIVE_INT64, split.y.data());
}

}  // namespace

PrepResult prepare_dataset(comm::ControlPlane& control, MPI_Comm io_comm, const RecordSource& train,
                           const RecordSource* test, const PrepOptions& options) {
  const int rank = control.rank(), size = control.size();
  using comm::on_all_ranks;
  namespace fs = std::filesystem;
  const fs::path output = options.output;

  if (!options.class_names.empty() && options.num_classes > 0 &&
      static_cast<std::int64_t>(options.class_names.size()) != options.num_classes) {
    SLIMTRAIN_THROW(ConfigError, "--class-names: ", options.class_names.size(),
                    " names given but --num-classes is ", options.num_classes);
  }
  on_all_ranks(control, [&] {
    if (rank != 0) return;
    if (fs::exists(output) && !options.force) {
      SLIMTRAIN_THROW(ConfigError, "-o: ", options.output, " exists; pass --force to replace it");
    }
    if (fs::is_directory(output))
      SLIMTRAIN_THROW(ConfigError, "-o: ", options.output, " is a directory");
  });
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
    const std::int64_t n = train.size();
    const auto n_val = static_cast<std::int64_t>(std::llround(options.val_fraction * double(n)));
    if (n_val >= n)
      SLIMTRAIN_THROW(ConfigError, "--val-fraction: ", options.val_fraction,
                      " leaves no training samples");
    if (n_val > 0) {
      std::vector<std::int64_t> order = permutation(n, options.seed, 0);
      v.rows.assign(order.begin(), order.begin() + n_val);
      t.rows.assign(order.begin() + n_val, order.end());
      std::sort(v.rows.begin(), v.rows.end());  // stored in source order: easy to compare
      std::sort(t.rows.begin(), t.rows.end());
    } else {
      t.rows.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) t.rows[static_cast<std::size_t>(i)] = i;
    }
    splits.push_back(std::move(t));
    if (n_val > 0) splits.push_back(std::move(v));
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
  for (const SplitBuffer& s : splits) {
    const std::int64_t n = s.total;
    (s.name == "train" ? result.train : s.name == "val" ? result.val : result.test) = n;
  }

  // Same temporary name on every rank: rank 0 picks it (its pid keeps concurrent runs apart).
  const fs::path dir = output.has_parent_path() ? output.parent_path() : fs::path(".");
  const std::int64_t pid = control.broadcast(static_cast<std::int64_t>(getpid()), 0);
  const std::string temp =
      (dir / ("." + output.filename().string() + ".tmp-" + std::to_string(pid))).string();
  const bool parallel = size > 1;
  runtime::remove_on_abort(temp);
  try {
    // Once inside, a rank cannot leave without its peers: the watchdog ends a stalled job, and a
    // rank that throws here ends it through job_exit (no agreement: peers sit in MPI-IO).
    runtime::Watchdog watchdog(options.io_timeout_s, "prep: the collective HDF5 write of " + temp);
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    silence_hdf5_errors();
    Hid access(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_FILE_ACCESS), temp));
    if (parallel) SLIMTRAIN_CHECK_HDF5(H5Pset_fapl_mpio(access, io_comm, MPI_INFO_NULL), temp);
    Hid file(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access));
    if (!file.valid())
      SLIMTRAIN_THROW(DataError, options.output, ": cannot create ", temp, ": ",
                      detail::hdf5_error_string());
    try {
      FaultPlan fault = FaultPlan::from_env();
      if (fault.armed(rank, FaultPhase::prep, 0)) fault.fire();
      write_string_attribute(file, "format", {kFormatName}, true);
      write_int_attribute(file, "format_version", kFormatVersion);
      write_int_attribute(file, "num_classes", result.num_classes);
      write_string_attribute(file, "class_names", class_names, false);
      for (const SplitBuffer& s : splits)
        write_split(file, s, options, result.mean, result.std, parallel, temp);
      SLIMTRAIN_CHECK_HDF5(H5Fflush(file, H5F_SCOPE_GLOBAL), temp);
      file.close_checked(temp);
    } catch (...) {
      // Closing a parallel file is collective and the peers are not coming: leave it open, the
      // job ends (and removes the file) instead.
      if (parallel) file.release();
      throw;
    }
  } catch (...) {
    if (rank == 0) std::remove(temp.c_str());
    throw;
  }
  try {
    on_all_ranks(control, [&] {
      if (rank != 0) return;
      // On disk before it has its name: a crash leaves the old output or the new one, whole.
      files::fsync_file(temp);
      files::rename_checked(temp, options.output);
      files::fsync_directory(dir.string());
    });
  } catch (...) {
    if (rank == 0) std::remove(temp.c_str());
    throw;
  }
  runtime::forget_on_abort(temp);
  return result;
}

}  // namespace slimtrain::cli
