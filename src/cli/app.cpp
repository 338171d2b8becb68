#include "slimtrain/cli/app.hpp"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <thread>

#include "slimtrain/cli/version_info.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/runtime/blas_kernels.hpp"
#include "slimtrain/runtime/job_exit.hpp"

namespace slimtrain::cli {
namespace {

// A rank above 0 that found a bad argument leaves the message to rank 0, which probes alike.
// Exiting at once would let the launcher kill rank 0 before its message is out (mpirun ends a job
// when one rank exits non-zero: CI saw the whole message lost), so this rank waits: rank 0's exit
// ends it here. Still alive after the wait, rank 0 did not find the error (a file missing on this
// node only): the message is this rank's to print.
void wait_for_rank_0_to_report() {
  std::this_thread::sleep_for(std::chrono::seconds(5));
}

void print_usage(std::ostream& out) {
  out << "usage: slimtrain <command> [options]\n\n"
         "Data-parallel classifier training on MPI/NCCL clusters that cannot hang: every\n"
         "collective has a deadline, a late evaluation is skipped on all ranks, a dead rank\n"
         "ends the job with a diagnosis and a checkpoint to resume.\n\ncommands:\n";
  for (const Command& c : commands()) {
    std::string name = c.name;
    name.resize(10, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "\n'slimtrain <command> --help' lists a command's options.\n"
         "exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 75 stopped by a signal\n"
         "after a checkpoint (requeue).\n";
}

std::string& invoked_as() {
  static std::string name = "slimtrain";
  return name;
}

}  // namespace

const std::string& program_command() {
  static const std::string command = [] {
    const std::string& argv0 = invoked_as();
    if (argv0.find('/') == std::string::npos) return std::string("slimtrain");  // from PATH
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    return n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : argv0;
  }();
  return command;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"prep",
       "convert IDX, CSV, NPY data, folders of JPEG/PNG images or text (tokenized) into "
       "slimtrain's HDF5 layout",
       run_prep},
      {"train", "train a classifier data-parallel (run under mpirun or srun)", run_train},
      {"eval", "evaluate a checkpoint on a split of an HDF5 file", run_eval},
      {"inspect", "describe and validate an HDF5 data file or a checkpoint", run_inspect},
      {"export", "write a checkpoint's weights or embeddings to HDF5", run_export},
      {"report", "write a self-contained HTML report of one or more run directories", run_report},
  };
  return table;
}

int run_main(int argc, char** argv) {
  if (argc > 0 && argv[0] != nullptr) invoked_as() = argv[0];
  try {
    // This program run again to time one set of OpenBLAS kernels (runtime/blas_kernels.hpp).
    if (runtime::is_kernel_probe_child()) return runtime::run_kernel_probe_child();
    if (argc < 2) {
      print_usage(std::cerr);
      return kExitUsage;
    }
    const std::string first = argv[1];
    if (first == "--help" || first == "-h" || first == "help") {
      print_usage(std::cout);
      return kExitOk;
    }
    if (first == "--version") {
      std::cout << version_text();
      return kExitOk;
    }
    // The commands that compute get the fastest OpenBLAS kernels before anything starts
    // (blas_kernels.hpp).
    if (first == "train" || first == "eval" || first == "export")
      runtime::reexec_for_openblas_kernels(argv);
    for (const Command& c : commands()) {
      if (first == c.name) return c.run(std::vector<std::string>(argv + 2, argv + argc));
    }
    std::cerr << "slimtrain: unknown command '" << first << "'\n\n";
    print_usage(std::cerr);
    return kExitUsage;
  } catch (const Error& e) {
    // Here before MPI started (or after it ended): a bad option or argument (the data file every
    // rank probes alike) is printed by rank 0, the others wait for its exit to end them; another
    // error by each rank that raised it. One write per message: lines from two ranks under mpirun
    // never run into each other.
    // A rank that exits 2 tells the job script so (runtime/job_exit.hpp): srun's code for a
    // rank it killed when this one exited (137) would read as a crash and get a relaunch.
    if (e.exit_code() == kExitUsage) runtime::report_failure(e.exit_code(), e.what());
    if (!e.told_by_peer()) {
      if (e.exit_code() == kExitUsage && launcher_rank() > 0) wait_for_rank_0_to_report();
      std::cerr << (e.describe() + "\n");
    }
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << ("slimtrain: error on rank " + std::to_string(process_rank()) + ": " +
                  foreign_message(e) + "\n");
    return kExitFailure;
  }
}

}  // namespace slimtrain::cli
