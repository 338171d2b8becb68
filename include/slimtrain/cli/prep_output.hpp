#pragma once
/**
 * @brief What every `prep` format shares when it writes: the output checked before any work, a
 * chunked dataset of rows that each rank fills with its own slice (collective MPI-IO under
 * several ranks), and the file written under a temporary name and renamed whole.
 */
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/hdf5_handle.hpp"

namespace slimtrain::cli {

/** @brief Collective: ConfigError on every rank, printed once, when `option` (options.output)
 * cannot be written: files::check_output_file on rank 0. */
void check_output(comm::ControlPlane& control, const PrepOptions& options,
                  const std::string& option = "-o");

/** @brief ConfigError when --class-names and --num-classes disagree on the count. */
void check_class_options(const PrepOptions& options);

/** @brief Collective: every rank's lines (`mine`, one per line), in rank order, on every rank. */
std::vector<std::string> gather_lines(comm::ControlPlane& control, const std::string& mine);

/** @brief Creates and fills datasets of rows, chunked along N (and compressed) per PrepOptions. */
class RowWriter {
 public:
  RowWriter(hid_t transfer, const PrepOptions& options, std::string where)
      : transfer_(transfer), options_(options), where_(std::move(where)) {}
  /** @brief A dataset `dims` ([N, ...]) of `file_type` under `parent`; `row_bytes` per row. */
  data::Hid create(hid_t parent, const std::string& name, hid_t file_type,
                   std::vector<hsize_t> dims, std::size_t row_bytes) const;
  /** @brief Writes rows [begin, begin + count) from `data` (collective: every rank calls it). */
  void write_rows(hid_t dataset, hid_t memory_type, std::int64_t begin, std::int64_t count,
                  const void* data) const;
  const std::string& where() const { return where_; }

 private:
  hid_t transfer_;
  const PrepOptions& options_;
  std::string where_;
};

/**
 * @brief Collective over `control` and `io_comm` (the same ranks): creates a temporary file
 * beside options.output (MPI-IO, also at one rank: the bytes are the same at any count), calls
 * `body` on every rank, then fsyncs and renames it to options.output. A rank that fails inside
 * `body` ends the job (its peers wait in MPI-IO); a stalled one is ended after
 * options.io_timeout_s. The temporary file never outlives the job.
 */
void write_output_atomically(comm::ControlPlane& control, MPI_Comm io_comm,
                             const PrepOptions& options,
                             const std::function<void(hid_t file, const RowWriter& rows)>& body);

}  // namespace slimtrain::cli
