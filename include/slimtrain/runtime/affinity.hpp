#pragma once
/**
 * @brief How many CPU cores a rank may use, from the affinity masks of the ranks on its node.
 *
 * `--threads 0` must follow what the launcher and the cgroup gave the job (srun --cpus-per-task,
 * mpirun's core binding, a cpuset), not the machine's core count: on a shared node
 * hardware_concurrency() reports cores that belong to other jobs. A rank with a mask of its own
 * gets all of it; ranks that share one mask (a job-wide cpuset, no binding) split it.
 */
#include <cstdint>
#include <vector>

namespace slimtrain::runtime {

/** @brief A CPU set as 64-bit words (bit c of word c / 64: cpu c), as sched_getaffinity sees it. */
using CpuMask = std::vector<std::uint64_t>;

/** @brief Words in every CpuMask (CPU_SETSIZE bits). */
inline constexpr std::size_t kCpuMaskWords = 16;

/** @brief This process's affinity mask; every cpu the machine has when it cannot be read. */
CpuMask own_cpu_mask();

/** @brief Number of cpus in `mask`. */
int cpu_count(const CpuMask& mask);

/**
 * @brief Cores for local rank `me` given every local rank's mask: its own cpus divided among
 * the local ranks whose masks overlap it (itself included), at least 1.
 */
int cores_for_rank(const std::vector<CpuMask>& local_masks, int me);

}  // namespace slimtrain::runtime
