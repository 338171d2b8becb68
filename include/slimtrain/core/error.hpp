#pragma once
/**
 * @brief The error hierarchy every part throws, and the exit codes `main` maps them to.
 *
 * Each error carries the MPI rank that raised it and the file:line of the throw, so a one-line
 * message from any rank of a large job still says which rank it came from (and, at
 * --log-level debug, where in the code).
 */
#include <stdexcept>
#include <string>
#include <vector>

namespace slimtrain {

/** @brief Process exit codes; documented in README.md. */
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  ///< runtime failure: I/O, communication, timeout, a bug
  kExitUsage = 2,    ///< bad option, bad config, bad input file: the user can fix it
  kExitRequeue =
      75,  ///< stopped by a signal after a checkpoint; the job script requeues (EX_TEMPFAIL)
};

/** @brief Rank recorded in errors and log lines; -1 until the runtime knows it. */
void set_process_rank(int rank);
int process_rank();
/** @brief This process's rank as its launcher names it before MPI starts (Open MPI, PMIx,
 * Slurm); -1 when none does (a process alone). */
int launcher_rank();
/** @brief The rank a log line carries: MPI's once known, the launcher's before, 0 alone. */
int log_rank();

/** @brief Base of all slimtrain errors. what() is the bare message; describe() adds origin. */
class Error : public std::runtime_error {
 public:
  Error(std::string message, const char* file, int line);
  int rank() const { return rank_; }
  const char* file() const { return file_; }
  int line() const { return line_; }
  virtual ExitCode exit_code() const { return kExitFailure; }
  virtual const char* kind() const { return "error"; }
  /**
   * @brief "slimtrain: <kind> on rank R: <message>"; at --log-level debug with the source
   * location too: "slimtrain: <kind> on rank R (file.cpp:42): <message>".
   */
  std::string describe() const;
  /**
   * @brief Another rank raised this error and prints it (an agreement passed it on): this rank
   * ends with its exit code and prints nothing, so each error is printed once, by its rank.
   */
  bool told_by_peer() const { return told_by_peer_; }
  void mark_told_by_peer() { told_by_peer_ = true; }

 private:
  int rank_;
  bool told_by_peer_ = false;
  const char* file_;
  int line_;
};

/** @brief A bad option, option value or config file. */
class ConfigError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return kExitUsage; }
  const char* kind() const override { return "config error"; }
};

/** @brief A malformed or unreadable input file; the message names file, dataset and problem. */
class DataError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return kExitUsage; }
  const char* kind() const override { return "data error"; }
};

/** @brief A communication failure (MPI, NCCL, CUDA). */
class CommError : public Error {
 public:
  using Error::Error;
  const char* kind() const override { return "communication error"; }
};

/** @brief An operation that missed its deadline; names the ranks that had not arrived. */
class TimeoutError : public CommError {
 public:
  TimeoutError(std::string message, std::vector<int> missing_ranks, const char* file, int line);
  const std::vector<int>& missing_ranks() const { return missing_ranks_; }
  const char* kind() const override { return "timeout"; }

 private:
  std::vector<int> missing_ranks_;
};

/**
 * @brief What a foreign exception (LibTorch's, the standard library's) says, for a one-line
 * message: its first line that is not blank (a TorchScript compiler report starts with an empty
 * one), with " (more at --log-level debug)" when more follows; the whole text is logged at debug.
 */
std::string foreign_message(const std::exception& e);

}  // namespace slimtrain

/** @brief Throws `Type` with a message built from the streamed arguments and this file:line. */
#define SLIMTRAIN_THROW(Type, ...) \
  throw Type(::slimtrain::detail::concat(__VA_ARGS__), __FILE__, __LINE__)

#include "slimtrain/core/detail/concat.hpp"
