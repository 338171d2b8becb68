#pragma once
/**
 * @file
 * @brief Reduce-scatter and all-gather of one piece of every rank's block as rings of
 * MPI_Sendrecv on the data plane's own communicator (MpiCommunicator's thread only).
 *
 * Open MPI 4.1's MPI_Reduce_scatter_block takes temporaries the size of the whole input, and its
 * all-gather of a strided piece a derived datatype per call: on the communication thread's heap
 * they stay resident all run. A ring needs neither: size - 1 steps, each moving one block's piece
 * to the right neighbour and taking one from the left, straight from and into the caller's
 * buffers (a reduce-scatter adds one piece of scratch beside `out`).
 */
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace slimtrain::comm::detail {

/** @brief One piece of every rank's block: `count` elements (`bytes` bytes) of `type`. */
struct RingPiece {
  std::size_t stride = 0;  ///< bytes from one rank's block to the next one's
  std::size_t at = 0;      ///< the piece's byte offset within a block
  int count = 0;
  std::size_t bytes = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

/**
 * @brief `in` holds size blocks; block r's piece summed over the ranks (by `op`) lands at
 * `out` on rank r. `out` must not overlap `in`; `scratch` grows to one piece.
 */
void ring_reduce_scatter(const char* in, char* out, const RingPiece& piece, MPI_Op op, int rank,
                         int size, MPI_Comm comm, std::vector<char>& scratch);

/**
 * @brief `out` holds size blocks; this rank's piece (`mine`, which may be its own place in `out`)
 * and every other rank's land at their places in `out`.
 */
void ring_all_gather(const char* mine, char* out, const RingPiece& piece, int rank, int size,
                     MPI_Comm comm);

}  // namespace slimtrain::comm::detail
