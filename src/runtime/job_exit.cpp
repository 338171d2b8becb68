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
// option every rank reads).
std::string identity_before_mpi() {
  const int rank = launcher_rank();
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "?");
  return "rank " + (rank < 0 ? std::string("?") : std::to_string(rank)) + " on " + host;
}

// Every rank failed together: whether they all raised the same error (those an agreement told
// are left out), and the lowest rank that raised it, so that only it prints it. Every rank is
// here (all_ranks_failed), so the blocking reductions return at once.
bool same_error_everywhere(const Runtime& runtime, bool told, const std::string& line, int& first) {
  const unsigned long long mine = std::hash<std::string>{}(line);
  unsigned long long low = told ? ~0ull : mine, high = told ? 0ull : mine;
  int rank = told ? runtime.size() : runtime.rank();
  if (MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, runtime.exit_comm()) !=
          MPI_SUCCESS ||
      MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, runtime.exit_comm()) !=
          MPI_SUCCESS ||
      MPI_Allreduce(MPI_IN_PLACE, &rank, 1, MPI_INT, MPI_MIN, runtime.exit_comm()) != MPI_SUCCESS)
    return false;
  first = rank;
  return low == high;
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
  std::string what, line, kind = "other";
  bool told = false;
  try {
    return body();
  } catch (const Error& e) {
    told = e.told_by_peer();  // the rank that raised it prints it
    line = e.describe();
    code = e.exit_code();
    what = e.what();
    kind = e.kind();
  } catch (const std::exception& e) {
    what = foreign_message(e);
    line = "slimtrain: error on rank " + std::to_string(runtime.rank()) + ": " + what;
  }
  const bool together = runtime.size() == 1 || all_ranks_failed(runtime);
  // The same error raised by every rank (a bad option, a file every rank reads) is printed once,
  // by the lowest of them; different errors each by its own rank. One write per message.
  int first = runtime.rank();
  if (together && runtime.size() > 1 && same_error_everywhere(runtime, told, kind + what, first))
    told = told || runtime.rank() != first;
  if (!told) std::cerr << (line + "\n") << std::flush;
  if (together) {
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
