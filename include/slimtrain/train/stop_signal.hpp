#pragma once
/**
 * @brief SIGUSR1/SIGTERM (Slurm's warning before a time limit, scancel) become a request to stop
 * at the next step boundary; the trainer agrees on it across ranks, checkpoints and exits 75.
 */
namespace slimtrain::train {

void install_stop_handlers();
/** @brief The signal received, or 0. */
int stop_signal();

}  // namespace slimtrain::train
