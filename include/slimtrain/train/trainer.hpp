#pragma once
/** @brief The training job: one call runs `slimtrain train` on this rank. */
#include "slimtrain/train/config.hpp"

namespace slimtrain::train {

/**
 * @brief Trains as configured and returns the process exit code: 0 done, 75 stopped by a signal
 * after a checkpoint. A training collective that misses its deadline never returns: the job is
 * aborted (MPI_Abort) after the stall report, so no rank is left hanging.
 */
int run_training(const TrainConfig& config);

}  // namespace slimtrain::train
