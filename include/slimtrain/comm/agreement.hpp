#pragma once
/**
 * @brief One outcome on every rank, over the control plane (so under a deadline): when a step
 * fails on any rank, every rank throws the error of the lowest failing rank, and a decision made
 * on one rank (rank 0's view of the file system) reaches every rank as an answer or as its error.
 * No rank then waits in a later collective for a peer that gave up.
 */
#include <exception>
#include <functional>
#include <string>

#include "slimtrain/comm/control_plane.hpp"

namespace slimtrain::comm {

/**
 * @brief Collective. `local` is this rank's failure (or null). If any rank failed, throws on all
 * ranks: the original exception on the lowest failing rank, elsewhere an error of the same class
 * (ConfigError, DataError, CommError or Error) with its message and exit code.
 */
void agree_or_throw(ControlPlane& control, std::exception_ptr local, const OpOptions& options = {});

/** @brief Runs `step` on every rank, then agree_or_throw on its outcome. */
template <typename Step>
void on_all_ranks(ControlPlane& control, Step&& step, const OpOptions& options = {}) {
  std::exception_ptr failure;
  try {
    step();
  } catch (...) {
    failure = std::current_exception();
  }
  agree_or_throw(control, failure, options);
}

/**
 * @brief Collective. Runs `decide` on `root` only and returns its answer on every rank; when it
 * throws, every rank throws an error of the same class and message (the original on `root`).
 */
std::string decide_on_root(ControlPlane& control, int root,
                           const std::function<std::string()>& decide,
                           const OpOptions& options = {});

}  // namespace slimtrain::comm
