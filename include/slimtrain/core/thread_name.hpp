#pragma once
/** @brief Names for slimtrain's own threads, as `top -H`, `ps -L` and gdb show them. */
#include <string>

namespace slimtrain {

/**
 * @brief Names the calling thread "st-" + `what` (Linux keeps 15 characters: the rest is cut).
 * Every long-lived thread calls it first, so a user (or e2e_train_threads) can tell the
 * communicator's worker from the prefetch thread or an OpenMP worker.
 */
void name_this_thread(const std::string& what);

}  // namespace slimtrain
