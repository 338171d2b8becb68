#pragma once
/**
 * @brief Input files for `prep` under mpirun. A raw file is mapped on every rank, which then
 * reads only the pages of its own records. A gzip stream cannot be entered mid-way: rank 0
 * alone decompresses it and broadcasts the bytes (MPI_Bcast on the I/O communicator, under a
 * watchdog of `io_timeout_s`), so N ranks of a node do not each read and inflate the same file.
 */
#include <mpi.h>

#include <string>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/input_file.hpp"

namespace slimtrain::cli {

/**
 * @brief Collective over `control` and `io_comm` (the same ranks). Every rank gets `path`'s
 * bytes; a failure (rank 0's for gzip) throws on every rank.
 */
data::InputBytes open_input_shared(const std::string& path, comm::ControlPlane& control,
                                   MPI_Comm io_comm, double io_timeout_s);

}  // namespace slimtrain::cli
