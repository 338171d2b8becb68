#pragma once
/**
 * @brief Reading a data file's layout first in a short-lived child process, so that a file
 * which crashes or hangs the HDF5 library is refused with a DataError (exit 2) instead of
 * killing or stalling slimtrain. HDF5 1.10 parses its own metadata without bounds checks in
 * places: fuzz_hdf5 found SEGVs in its metadata cache, heap overflows in its object headers and
 * an endless loop on a damaged global heap, all before slimtrain gets a value it could check.
 */
#include <cstddef>
#include <string>

#include "slimtrain/core/detail/concat.hpp"

namespace slimtrain::data {

struct ProbeOptions {
  /** @brief How long the child may take before it is killed and the file called damaged. */
  double timeout_s = 60.0;
  /** @brief What sets timeout_s (an option), for the message. */
  const char* deadline_name = "the layout probe's deadline";
  /** @brief Runs first in the child: unit tests make it crash or stall there. */
  void (*in_child)() = nullptr;
};

/**
 * @brief In a forked child: read_dataset_info(path), then the first and last row of x and y of
 * every split. A DataError there is thrown here with the same message; a crash, a signal or the
 * deadline becomes a DataError naming the file, the object HDF5 was reading and what happened.
 * Fork before MPI_Init and before other threads start (the child takes hdf5_mutex()).
 */
void probe_data_file(const std::string& path, const ProbeOptions& options);

/** @brief Rows past this size are not read by the probe: one row of a [N, 2^31] float file is
 * 8 GiB. */
inline constexpr std::size_t kMaxProbedRowBytes = std::size_t{1} << 26;

/**
 * @brief What the probe's child reads, in this process: the layout, then the first and last
 * row of x and y of every split whose rows are at most `max_row_bytes` (both ends of each chunk
 * index). fuzz_hdf5's long-lived probe process calls it directly, with its own bound.
 */
void read_layout_and_edges(const std::string& path, std::size_t max_row_bytes = kMaxProbedRowBytes);

namespace detail {
bool noting_hdf5_reads();
void note_hdf5_read_text(const std::string& what);
}  // namespace detail

/**
 * @brief Names what HDF5 reads next ("FILE: /train/x: attribute 'mean'", given in parts) for the
 * probe's message when HDF5 dies there. Outside a probe's child it is one test: the parts are
 * not joined, so the loaders' reads pay nothing for it.
 */
template <typename... Parts>
void note_hdf5_read(const Parts&... parts) {
  if (detail::noting_hdf5_reads()) detail::note_hdf5_read_text(slimtrain::detail::concat(parts...));
}

}  // namespace slimtrain::data
