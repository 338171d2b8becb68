#pragma once
/** @brief CHECK_MPI: turns a failed MPI return code into a CommError naming the call. */
#include <mpi.h>

#include <string>

#include "slimtrain/core/error.hpp"

namespace slimtrain::detail {
/** @brief MPI_Error_string of `code`. */
std::string mpi_error_string(int code);
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
}  // namespace slimtrain::detail

#define SLIMTRAIN_CHECK_MPI(call)                                                         \
  do {                                                                                    \
    const int slimtrain_mpi_rc_ = (call);                                                 \
    if (slimtrain_mpi_rc_ != MPI_SUCCESS)                                                 \
      ::slimtrain::detail::throw_mpi_error(slimtrain_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
