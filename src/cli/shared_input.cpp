#include "slimtrain/cli/shared_input.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/runtime/watchdog.hpp"

namespace slimtrain::cli {

using data::InputBytes;
using data::is_gzip;
using data::open_input;
using data::read_input_file;

InputBytes open_input_shared(const std::string& path, comm::ControlPlane& control, MPI_Comm io_comm,
                             double io_timeout_s) {
  if (control.size() == 1) return open_input(path);
  // Rank 0 decides for everyone: "raw" (each rank maps it) or the decompressed size. Its errors
  // (unreadable file, corrupt gzip) reach every rank here, before any bulk transfer.
  std::vector<std::uint8_t> bytes;
  comm::OpOptions options;
  options.tag = "prep-input";
  const std::string answer = comm::decide_on_root(
      control, 0,
      [&] {
        if (!is_gzip(path)) return std::string("raw");
        bytes = read_input_file(path);
        return std::to_string(bytes.size());
      },
      options);
  if (answer == "raw") return InputBytes::map(path);
  bytes.resize(std::stoull(answer));
  // Plain MPI_Bcast is several times faster than the control plane for tens of MB; it has no
  // deadline of its own, so a watchdog bounds it.
  runtime::Watchdog watchdog(io_timeout_s, "prep: broadcasting the decompressed " + path);
  constexpr std::size_t kPiece = std::size_t(1) << 30;
  for (std::size_t at = 0; at < bytes.size(); at += kPiece) {
    const int count = static_cast<int>(std::min(kPiece, bytes.size() - at));
    SLIMTRAIN_CHECK_MPI(MPI_Bcast(bytes.data() + at, count, MPI_BYTE, 0, io_comm));
  }
  return InputBytes(std::move(bytes));
}

}  // namespace slimtrain::cli
