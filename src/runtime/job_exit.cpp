#include "slimtrain/runtime/job_exit.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::runtime {
namespace {
std::mutex g_files_mutex;
std::set<std::string> g_files;
std::string g_identity;  // set by the Runtime; before it, see identity_before_mpi

// True when every rank reached this point within the window (all failed together).
bool all_ranks_failed(const Runtime& runtime) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(runtime.exit_comm(), &request) != MPI_SUCCESS) return false;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kFailureWindowSeconds);
  while (std::chrono::steady_clock::now() < until) {
    int done = 0;
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;  // the request is abandoned: MPI_Abort follows
}
// Tells the launcher that this rank cannot continue (see report_failure); best effort: a failing
// file system must not hide the error it reports.
void append_failure_line(const std::string& line) {
  const char* path = std::getenv(kFailureFileVariable);
  if (path == nullptr || *path == '\0') return;
  std::ofstream out(path, std::ios::app);
  out << line << std::endl;
}
// "rank 1 on node2" from the launcher's environment, for a failure before MPI has started (a bad
// option every rank reads): Open MPI, PMIx (srun) and Slurm name the rank before MPI_Init does.
std::string identity_before_mpi() {
  std::string rank = "?";
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      rank = value;
      break;
    }
  }
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "?");
  return "rank " + rank + " on " + host;
}
}  // namespace

void set_failure_identity(int rank, const std::string& host) {
  std::lock_guard<std::mutex> lock(g_files_mutex);
  g_identity = "rank " + std::to_string(rank) + " on " + host;
}

void report_failure(int code, const std::string& what) {
  std::string identity;
  {
    std::lock_guard<std::mutex> lock(g_files_mutex);
    identity = g_identity;
  }
  if (identity.empty()) identity = identity_before_mpi();
  append_failure_line(identity + " exit " + std::to_string(code) + ": " +
                      what.substr(0, what.find('\n')));
}

void remove_on_abort(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_files_mutex);
  g_files.insert(path);
}

void forget_on_abort(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_files_mutex);
  g_files.erase(path);
}

void abort_job(int code, const std::string& why) {
  // Armed before anything that can block: MPI_Abort asks mpirun to end every rank, but if the
  // launcher cannot be reached (its node's link is down), or the failure file and the partial
  // outputs sit on a hung shared file system, this rank still leaves within seconds.
  std::thread([code] {
    std::this_thread::sleep_for(std::chrono::duration<double>(kAbortExitSeconds));
    std::_Exit(code);
  }).detach();
  if (!why.empty()) report_failure(code, why);
  {
    std::lock_guard<std::mutex> lock(g_files_mutex);
    for (const std::string& path : g_files) std::remove(path.c_str());
  }
  std::cerr.flush();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

int run_guarded(const Runtime& runtime, const std::function<int()>& body) {
  int code = kExitFailure;
  std::string what;
  try {
    return body();
  } catch (const Error& e) {
    // One write per message, and only by the rank that raised it (told_by_peer).
    if (!e.told_by_peer()) std::cerr << (e.describe() + "\n") << std::flush;
    code = e.exit_code();
    what = e.what();
  } catch (const std::exception& e) {
    what = foreign_message(e);
    std::cerr << ("slimtrain: error on rank " + std::to_string(runtime.rank()) + ": " + what + "\n")
              << std::flush;
  }
  if (runtime.size() == 1 || all_ranks_failed(runtime)) {
    // Bad input is reported too: a launcher that kills the other ranks as this one exits returns
    // its own code for them, and the job script must still see a 2 (jobs/watch.sh).
    if (code == kExitUsage) report_failure(code, what);
    return code;
  }
  log::error("ending the job (MPI_Abort, exit ", code,
             ") so that no rank waits for this one; the message above says why");
  abort_job(code, what.empty() ? "failed" : what);
}

}  // namespace slimtrain::runtime
