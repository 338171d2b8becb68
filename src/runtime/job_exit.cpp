#include "slimtrain/runtime/job_exit.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
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
}  // namespace

void remove_on_abort(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_files_mutex);
  g_files.insert(path);
}

void forget_on_abort(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_files_mutex);
  g_files.erase(path);
}

void abort_job(int code) {
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
  try {
    return body();
  } catch (const Error& e) {
    std::cerr << e.describe() << std::endl;
    code = e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "slimtrain: error on rank " << runtime.rank() << ": " << e.what() << std::endl;
  }
  if (runtime.size() == 1 || all_ranks_failed(runtime)) return code;
  log::error("ending the job (MPI_Abort, exit ", code,
             ") so that no rank waits for this one; the message above says why");
  abort_job(code);
}

}  // namespace slimtrain::runtime
