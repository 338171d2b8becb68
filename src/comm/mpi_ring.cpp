#include "slimtrain/comm/detail/mpi_ring.hpp"

#include <cstring>

#include "slimtrain/core/check_mpi.hpp"

namespace slimtrain::comm::detail {
namespace {

// The data plane's communicator is its own duplicate, where nothing else sends point to point.
constexpr int kRingTag = 29;

int wrap(int b, int size) {
  return ((b % size) + size) % size;
}

}  // namespace

// Step s sends the partial sum of block rank - s - 1 to the right and adds this rank's own part
// of block rank - s - 2 to the partial arriving from the left; after size - 1 steps the partial
// in hand is block rank's whole sum. The partials alternate between `scratch` and `out` so that
// the last one lands in `out`, and a step never receives into the buffer it sends from.
void ring_reduce_scatter(const char* in, char* out, const RingPiece& piece, MPI_Op op, int rank,
                         int size, MPI_Comm comm, std::vector<char>& scratch) {
  const auto own = [&](int b) {
    return in + static_cast<std::size_t>(wrap(b, size)) * piece.stride + piece.at;
  };
  if (size == 1) {
    std::memcpy(out, own(0), piece.bytes);
    return;
  }
  scratch.resize(piece.bytes);
  const int right = wrap(rank + 1, size), left = wrap(rank - 1, size);
  const char* send = own(rank - 1);
  for (int step = 0; step + 1 < size; ++step) {
    char* into = (size - 2 - step) % 2 == 0 ? out : scratch.data();
    SLIMTRAIN_CHECK_MPI(MPI_Sendrecv(send, piece.count, piece.type, right, kRingTag, into,
                                     piece.count, piece.type, left, kRingTag, comm,
                                     MPI_STATUS_IGNORE));
    SLIMTRAIN_CHECK_MPI(MPI_Reduce_local(own(rank - step - 2), into, piece.count, piece.type, op));
    send = into;
  }
}

// Step s passes block rank - s's piece (this rank's own at step 0) to the right and receives
// block rank - s - 1's from the left, each straight to its place in `out`.
void ring_all_gather(const char* mine, char* out, const RingPiece& piece, int rank, int size,
                     MPI_Comm comm) {
  const auto place = [&](int b) {
    return out + static_cast<std::size_t>(wrap(b, size)) * piece.stride + piece.at;
  };
  if (place(rank) != mine) std::memcpy(place(rank), mine, piece.bytes);
  const int right = wrap(rank + 1, size), left = wrap(rank - 1, size);
  for (int step = 0; step + 1 < size; ++step)
    SLIMTRAIN_CHECK_MPI(MPI_Sendrecv(place(rank - step), piece.count, piece.type, right, kRingTag,
                                     place(rank - step - 1), piece.count, piece.type, left,
                                     kRingTag, comm, MPI_STATUS_IGNORE));
}

}  // namespace slimtrain::comm::detail
