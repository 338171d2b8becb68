#include "slimtrain/cli/prep_output.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/fault_injection.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_rows.hpp"
#include "slimtrain/runtime/job_exit.hpp"
#include "slimtrain/runtime/watchdog.hpp"

namespace slimtrain::cli {

using data::Hid;
namespace fs = std::filesystem;

void check_output(comm::ControlPlane& control, const PrepOptions& options,
                  const std::string& option) {
  // Rank 0's view (it renames the file into place); one error on every rank, printed once.
  comm::on_all_ranks(control, [&] {
    if (control.rank() == 0) files::check_output_file(options.output, options.force, option);
  });
}

void check_class_options(const PrepOptions& options) {
  if (!options.class_names.empty() && options.num_classes > 0 &&
      static_cast<std::int64_t>(options.class_names.size()) != options.num_classes)
    SLIMTRAIN_THROW(ConfigError, "--class-names: ", options.class_names.size(),
                    " names given but --num-classes is ", options.num_classes);
}

std::vector<std::string> gather_lines(comm::ControlPlane& control, const std::string& mine) {
  std::vector<std::string> all;
  for (int r = 0; r < control.size(); ++r) {
    std::istringstream theirs(control.broadcast(control.rank() == r ? mine : std::string(), r));
    for (std::string line; std::getline(theirs, line);) all.push_back(line);
  }
  return all;
}

Hid RowWriter::create(hid_t parent, const std::string& name, hid_t file_type,
                      std::vector<hsize_t> dims, std::size_t row_bytes) const {
  Hid space(SLIMTRAIN_CHECK_HDF5(
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), where_));
  Hid plist(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_DATASET_CREATE), where_));
  std::vector<hsize_t> chunk = dims;
  const hsize_t rows = std::max<hsize_t>(dims[0], 1);
  chunk[0] =
      std::clamp<hsize_t>(options_.chunk_bytes / std::max<std::size_t>(row_bytes, 1), 1, rows);
  SLIMTRAIN_CHECK_HDF5(H5Pset_chunk(plist, static_cast<int>(chunk.size()), chunk.data()), where_);
  SLIMTRAIN_CHECK_HDF5(H5Pset_fill_time(plist, H5D_FILL_TIME_NEVER), where_);
  // No modification times in object headers: the same input gives the same bytes.
  SLIMTRAIN_CHECK_HDF5(H5Pset_obj_track_times(plist, false), where_);
  if (options_.compress > 0) {
    SLIMTRAIN_CHECK_HDF5(H5Pset_shuffle(plist), where_);
    SLIMTRAIN_CHECK_HDF5(H5Pset_deflate(plist, static_cast<unsigned>(options_.compress)), where_);
  }
  return Hid(SLIMTRAIN_CHECK_HDF5(
      H5Dcreate2(parent, name.c_str(), file_type, space, H5P_DEFAULT, plist, H5P_DEFAULT),
      where_ + ": " + name));
}

void RowWriter::write_rows(hid_t dataset, hid_t memory_type, std::int64_t begin, std::int64_t count,
                           const void* data) const {
  data::write_rows(dataset, memory_type, begin, count, data, where_, transfer_);
}

void write_output_atomically(comm::ControlPlane& control, MPI_Comm io_comm,
                             const PrepOptions& options,
                             const std::function<void(hid_t file, const RowWriter& rows)>& body) {
  const int rank = control.rank();
  const fs::path output = options.output;
  // Same temporary name on every rank: rank 0 picks it (its pid keeps concurrent runs apart).
  const fs::path dir = output.has_parent_path() ? output.parent_path() : fs::path(".");
  const std::int64_t pid = control.broadcast(static_cast<std::int64_t>(getpid()), 0);
  const std::string temp =
      (dir / ("." + output.filename().string() + ".tmp-" + std::to_string(pid))).string();
  runtime::remove_on_abort(temp);
  try {
    // Once inside, a rank cannot leave without its peers: the watchdog ends a stalled job, and a
    // rank that throws here ends it through job_exit (no agreement: peers sit in MPI-IO).
    runtime::Watchdog watchdog(options.io_timeout_s, "prep: the collective HDF5 write of " + temp);
    std::lock_guard<std::recursive_mutex> lock(data::hdf5_mutex());
    data::silence_hdf5_errors();
    Hid access(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_FILE_ACCESS), temp));
    // MPI-IO at one rank too: the file then comes out byte for byte the same at any rank count
    // (the serial driver lays it out differently).
    SLIMTRAIN_CHECK_HDF5(H5Pset_fapl_mpio(access, io_comm, MPI_INFO_NULL), temp);
    Hid file(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access));
    if (!file.valid())
      SLIMTRAIN_THROW(DataError, options.output, ": cannot create ", temp, ": ",
                      detail::hdf5_error_string());
    try {
      FaultPlan fault = FaultPlan::from_env();
      if (fault.armed(rank, FaultPhase::prep, 0)) fault.fire();
      Hid transfer(SLIMTRAIN_CHECK_HDF5(H5Pcreate(H5P_DATASET_XFER), temp));
      SLIMTRAIN_CHECK_HDF5(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE), temp);
      body(file, RowWriter(transfer, options, temp));
      SLIMTRAIN_CHECK_HDF5(H5Fflush(file, H5F_SCOPE_GLOBAL), temp);
      file.close_checked(temp);
    } catch (...) {
      // Closing a parallel file is collective and the peers are not coming: leave it open, the
      // job ends (and removes the file) instead.
      if (control.size() > 1) file.release();
      throw;
    }
  } catch (...) {
    if (rank == 0) std::remove(temp.c_str());
    throw;
  }
  try {
    comm::on_all_ranks(control, [&] {
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
}

}  // namespace slimtrain::cli
