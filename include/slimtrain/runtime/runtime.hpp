#pragma once
/**
 * @brief Process startup: MPI with full thread support, world and node-local ranks, hostnames.
 *
 * Works under mpirun, under srun with PMIx, and as a lone process (world size 1). If MPI is
 * already initialised (a test harness did it), the runtime adopts it and does not finalise.
 */
#include <mpi.h>

#include <string>
#include <vector>

namespace slimtrain::runtime {

class Runtime {
 public:
  /** @brief Initialises MPI with MPI_THREAD_MULTIPLE; throws CommError if it is not provided. */
  Runtime(int* argc, char*** argv);
  Runtime() : Runtime(nullptr, nullptr) {}
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /** @brief Rank and size among the processes sharing this node (MPI_COMM_TYPE_SHARED). */
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  /** @brief CPU cores this rank may use: its affinity mask shared among the local ranks on it. */
  int cores() const { return cores_; }
  const std::string& hostname() const { return hostname_; }
  /** @brief Hostname of every rank, indexed by world rank (gathered once at startup). */
  const std::vector<std::string>& hostnames() const { return hostnames_; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  /** @brief A duplicate of the world used only when ranks fail (see job_exit.hpp). */
  MPI_Comm exit_comm() const { return exit_comm_; }

 private:
  bool owns_mpi_ = false;
  MPI_Comm exit_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int cores_ = 1;
  std::string hostname_;
  std::vector<std::string> hostnames_;
};

/**
 * @brief Asks the Runtime to end the job with MPI_Abort instead of MPI_Finalize: set when an
 * operation can never complete (a peer never joined), where MPI_Finalize would hang.
 */
void abort_at_exit(const std::string& reason);
/** @brief The reason given to abort_at_exit, or "" when the process may finalise normally. */
std::string abort_at_exit_reason();

}  // namespace slimtrain::runtime
