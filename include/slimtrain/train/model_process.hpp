#pragma once
/** @brief The start of every process that runs a model over a data file (train, eval). */
#include <string>

namespace slimtrain::train {

/**
 * @brief The start of a process that runs a model over `path` (train, eval), before MPI_Init
 * starts threads: freed memory stays in one heap (runtime::keep_freed_memory: threads would take
 * arenas of their own), then the file is probed (data::probe_data_file: a fork after MPI_Init is
 * unsafe with some interconnects, RDMA) under --io-timeout.
 */
void start_model_process(const std::string& path, double io_timeout_s);

}  // namespace slimtrain::train
