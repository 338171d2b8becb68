#pragma once
/**
 * @brief One outcome on every rank: when a step fails on any rank, every rank throws the error
 * of the lowest failing rank, so no rank waits in a later collective for a peer that gave up.
 */
#include <mpi.h>

#include <exception>

namespace slimtrain::data {

/**
 * @brief Collective over `comm`. `local` is this rank's failure (or null). If any rank failed,
 * throws on all ranks: the original exception on the failing rank, a DataError (or Error) with
 * the same message and exit code elsewhere.
 */
void agree_or_throw(MPI_Comm comm, std::exception_ptr local);

/** @brief Runs `step` on every rank, then agree_or_throw on its outcome. */
template <typename Step>
void on_all_ranks(MPI_Comm comm, Step&& step) {
  std::exception_ptr failure;
  try {
    step();
  } catch (...) {
    failure = std::current_exception();
  }
  agree_or_throw(comm, failure);
}

}  // namespace slimtrain::data
