#pragma once
/** @brief Binds each rank to its device: one GPU per local rank, or a share of the CPU cores. */
#include <string>

#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::runtime {

/** @brief The device a rank computes on. */
struct DeviceBinding {
  std::string kind;  ///< "cpu" or "cuda"
  int index = -1;    ///< GPU index for cuda, -1 for cpu
  int threads = 1;   ///< LibTorch intra-op threads of this rank
  int cores = 1;     ///< CPU cores this rank may run on (see cores_per_rank)
  /** @brief "cuda:1, 4 threads" or "cpu, 2 threads". */
  std::string describe() const;
};

/**
 * @brief device "cuda": local rank -> GPU (cudaSetDevice); ConfigError when local ranks outnumber
 * GPUs or when built without CUDA. device "cpu": LibTorch intra-op threads = `threads`, or
 * max(1, hardware cores / local ranks) when `threads` is 0. Any other device: ConfigError.
 */
DeviceBinding bind_device(const Runtime& runtime, const std::string& device, int threads);

/**
 * @brief CPU cores one rank may run on: its affinity mask when the launcher bound it to fewer
 * cores than the machine has (mpirun's default core binding, srun --cpus-per-task), else the
 * machine's cores / `local_size`.
 */
int cores_per_rank(int local_size);

/** @brief The thread count bind_device uses: `requested`, or max(1, cores / local_size) if 0. */
int choose_threads(int requested, int cores, int local_size);
/**
 * @brief The GPU for `local_rank`; ConfigError naming the host when `local_size` ranks share
 * fewer than `devices` GPUs. `why_none` explains a zero count (e.g. no driver).
 */
int choose_gpu(int local_rank, int local_size, int devices, const std::string& host,
               const std::string& why_none);

}  // namespace slimtrain::runtime
