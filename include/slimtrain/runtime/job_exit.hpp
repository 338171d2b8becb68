#pragma once
/**
 * @brief How a rank leaves a job when something fails, so no error is lost and nothing hangs.
 *
 * A rank that fails prints its own one-line error (rank and file:line). If every rank failed
 * together (a bad option all of them read), they all finalise normally and exit with the error's
 * code, the error printed once where every rank raised the same one. Otherwise the peers are most
 * likely waiting for this rank inside a collective: the failing rank ends the whole job with
 * MPI_Abort within seconds, instead of letting them wait out their deadline and unwinding into an
 * MPI_Finalize that would wait for them.
 */
#include <functional>
#include <string>

#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::runtime {

/** @brief Seconds a failing rank waits for the others to fail too before MPI_Abort. */
inline constexpr double kFailureWindowSeconds = 3.0;
/** @brief Seconds after MPI_Abort at which the rank exits by itself (the launcher is gone). */
inline constexpr double kAbortExitSeconds = 10.0;

/**
 * @brief Environment variable naming a file where a rank that ends the job appends one line,
 * "rank 0 on node1 exit 1: <error>". Launchers (jobs/local.sh, jobs/train.sbatch) watch it: when
 * a node is unreachable, mpirun waits minutes for that node's daemon after MPI_Abort, and the
 * job would hold its nodes; the launcher ends it a few seconds after the line appears instead.
 * On several nodes the file must be on a shared file system (the run directory is).
 */
inline constexpr const char* kFailureFileVariable = "SLIMTRAIN_FAILURE_FILE";

/** @brief "rank 3 on node2", the start of this rank's failure lines (the Runtime sets it). */
void set_failure_identity(int rank, const std::string& host);
/** @brief Appends this rank's line to $SLIMTRAIN_FAILURE_FILE, if set (first line of `what`). */
void report_failure(int code, const std::string& what);

/**
 * @brief Runs `body` and returns its exit code; on an exception prints it and leaves as above
 * (returns its exit code when every rank failed, else never returns).
 */
int run_guarded(const Runtime& runtime, const std::function<int()>& body);

/** @brief A file that must not outlive an aborted job (a partial output); see abort_job. */
void remove_on_abort(const std::string& path);
/** @brief The file is complete (or gone): abort_job leaves it alone. */
void forget_on_abort(const std::string& path);

/**
 * @brief Ends the whole job now: reports `why` (if not empty) with report_failure, removes the
 * files named above, MPI_Abort(code); exits by itself kAbortExitSeconds later at the latest.
 */
[[noreturn]] void abort_job(int code, const std::string& why = "");

}  // namespace slimtrain::runtime
