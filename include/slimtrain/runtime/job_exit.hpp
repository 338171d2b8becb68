#pragma once
/**
 * @brief How a rank leaves a job when something fails, so no error is lost and nothing hangs.
 *
 * A rank that fails prints its own one-line error (rank and file:line) first. If every rank
 * failed together (a bad option all of them read), they all finalise normally and exit with the
 * error's code. Otherwise the peers are most likely waiting for this rank inside a collective:
 * the failing rank ends the whole job with MPI_Abort within seconds, instead of letting them
 * wait out their deadline and unwinding into an MPI_Finalize that would wait for them.
 */
#include <functional>
#include <string>

#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::runtime {

/** @brief Seconds a failing rank waits for the others to fail too before MPI_Abort. */
inline constexpr double kFailureWindowSeconds = 3.0;

/**
 * @brief Runs `body` and returns its exit code; on an exception prints it and leaves as above
 * (returns its exit code when every rank failed, else never returns).
 */
int run_guarded(const Runtime& runtime, const std::function<int()>& body);

/** @brief A file that must not outlive an aborted job (a partial output); see abort_job. */
void remove_on_abort(const std::string& path);
/** @brief The file is complete (or gone): abort_job leaves it alone. */
void forget_on_abort(const std::string& path);

/** @brief Ends the whole job now: removes the files named above, MPI_Abort(code). */
[[noreturn]] void abort_job(int code);

}  // namespace slimtrain::runtime
