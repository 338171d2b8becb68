#pragma once
/**
 * @brief Writes a slimtrain HDF5 file (layout version 1) from record sources, in parallel when
 * there are several ranks (MPI-IO, collective writes; each rank converts a slice of the rows).
 *
 * Atomic: written under a temporary name in the output's directory, fsynced, renamed at the end.
 * Every failure before the write (reading, converting, checking the input) is agreed over the
 * control plane: every rank throws the same error. A failure inside the collective write cannot
 * be agreed on (the peers wait inside MPI-IO): that rank throws, and the job ends (job_exit); a
 * rank stalled in it is ended by a watchdog after `io_timeout_s`. The temporary file never
 * outlives the job.
 */
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::cli {

using data::RecordSource;

struct PrepOptions {
  std::string output;
  /** @brief Fraction of train moved to /val, chosen by a permutation seeded with `seed`. */
  double val_fraction = 0.0;
  std::uint64_t seed = 0;
  std::vector<std::string> class_names;
  /** @brief 0: class_names.size() when given, else max label + 1. */
  std::int64_t num_classes = 0;
  /** @brief deflate level 0-9 (0: no filters); with > 0 the shuffle filter too. */
  int compress = 0;
  std::size_t chunk_bytes = std::size_t(1) << 20;
  bool force = false;
  /** @brief Seconds the collective write may take before the job is ended. */
  double io_timeout_s = 600.0;
  /** @brief A record whose read throws DataError is left out and listed, not fatal. */
  bool skip_bad = false;
  /** @brief Stored as x's mean and std instead of the training split's (--preprocessor). */
  std::vector<float> fixed_mean, fixed_std;
};

struct PrepResult {
  std::int64_t num_classes = 0;
  std::int64_t train = 0, val = 0, test = 0;
  std::vector<float> mean, std;
  /** @brief skip_bad: "record: why" for each record left out, in rank order (every rank). */
  std::vector<std::string> skipped;
  /** @brief What a skipped entry is: "file" (images) or "record" (text). */
  std::string skipped_noun = "file";
};

/**
 * @brief Source rows of /train and /val (each sorted): options.val_fraction of `n` drawn by a
 * permutation seeded with options.seed. ConfigError when no training row is left.
 */
void train_val_rows(std::int64_t n, const PrepOptions& options, std::vector<std::int64_t>& train,
                    std::vector<std::int64_t>& val);

/**
 * @brief Collective over `control` and `io_comm` (the same ranks); `test` may be null. Throws
 * DataError/ConfigError (exit 2).
 */
PrepResult prepare_dataset(comm::ControlPlane& control, MPI_Comm io_comm, const RecordSource& train,
                           const RecordSource* test, const PrepOptions& options);

}  // namespace slimtrain::cli
