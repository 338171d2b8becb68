#include "slimtrain/data/agreement.hpp"

#include <string>

#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::data {
namespace {
// What peers rethrow: the same class as far as the exit code and callers' catch clauses go.
enum Kind : int { kConfig, kData, kOther };
}  // namespace

void agree_or_throw(MPI_Comm comm, std::exception_ptr local) {
  int rank = 0, size = 1;
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(comm, &size));
  std::string message;
  int code = kOther;
  if (local) {
    try {
      std::rethrow_exception(local);
    } catch (const Error& e) {
      message = e.what();
      code = dynamic_cast<const ConfigError*>(&e) ? kConfig
             : e.exit_code() == kExitUsage        ? kData
                                                  : kOther;
    } catch (const std::exception& e) {
      message = e.what();
    }
  }
  const int mine = local ? rank : size;
  int first = size;
  SLIMTRAIN_CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return;
  int header[2] = {static_cast<int>(message.size()), code};
  SLIMTRAIN_CHECK_MPI(MPI_Bcast(header, 2, MPI_INT, first, comm));
  message.resize(static_cast<std::size_t>(header[0]));
  SLIMTRAIN_CHECK_MPI(MPI_Bcast(message.data(), header[0], MPI_CHAR, first, comm));
  if (rank == first) std::rethrow_exception(local);
  message = "rank " + std::to_string(first) + " failed: " + message;
  if (header[1] == kConfig) throw ConfigError(message, __FILE__, __LINE__);
  if (header[1] == kData) throw DataError(message, __FILE__, __LINE__);
  throw Error(message, __FILE__, __LINE__);
}

}  // namespace slimtrain::data
