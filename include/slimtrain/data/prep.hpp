#pragma once
/**
 * @brief Writes a slimtrain HDF5 file (layout version 1) from record sources, in parallel when
 * `comm` has several ranks (MPI-IO, collective writes; each rank converts a slice of the rows).
 *
 * Atomic: written under a temporary name in the output's directory and renamed at the end; on
 * any error, on any rank, every rank throws the same error and the temporary file is removed.
 */
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

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
};

struct PrepResult {
  std::int64_t num_classes = 0;
  std::int64_t train = 0, val = 0, test = 0;
  std::vector<float> mean, std;
};

/** @brief Collective over `comm`; `test` may be null. Throws DataError/ConfigError (exit 2). */
PrepResult prepare_dataset(MPI_Comm comm, const RecordSource& train, const RecordSource* test,
                           const PrepOptions& options);

}  // namespace slimtrain::data
