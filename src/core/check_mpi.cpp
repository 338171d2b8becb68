#include "slimtrain/core/check_mpi.hpp"

namespace slimtrain::detail {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  throw CommError(concat(call, " failed: ", mpi_error_string(code)), file, line);
}

}  // namespace slimtrain::detail
