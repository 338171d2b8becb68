#pragma once
/** @brief Binds each rank to its device: one GPU per local rank, or a share of the CPU cores. */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/runtime/blas.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::runtime {

/** @brief The device a rank computes on. */
struct DeviceBinding {
  std::string kind;      ///< "cpu" or "cuda"
  int index = -1;        ///< GPU index for cuda, -1 for cpu
  int threads = 1;       ///< LibTorch intra-op threads of this rank
  int cores = 1;         ///< CPU cores this rank may run on (Runtime::cores)
  BlasInfo blas;         ///< the BLAS LibTorch calls
  int blas_threads = 0;  ///< the size set for its own thread pool; 0: none set
  /** @brief "cuda:1, 4 threads" or "cpu, 2 threads". */
  std::string describe() const;
};

/** @brief What this rank found for --device cuda, before the ranks compare notes. */
struct GpuChoice {
  int index = -1;
  std::string uuid;     ///< the device's UUID, for the shared-GPU check
  std::string problem;  ///< why this rank cannot use a GPU; "" when it can
};

/**
 * @brief This rank alone: the GPU choose_gpu gives it among those it sees and that GPU's UUID,
 * or the problem (no GPU, no driver, slimtrain or its LibTorch built without CUDA). Throws
 * nothing: the ranks agree on the problems first (train/device_setup.hpp), so all fail alike.
 */
GpuChoice find_gpu(const Runtime& runtime);

/** @brief GPU `index`'s free memory now (cudaMemGetInfo); 0 when unknown or built without CUDA. */
std::uint64_t gpu_free_bytes(int index);

/** @brief cudaSetDevice(index), once no two ranks share the GPU. */
void use_gpu(int index);

/**
 * @brief This rank's threads for `device` ("cpu", or "cuda" on GPU `gpu_index`): LibTorch
 * intra-op threads = `threads`, or Runtime::cores() when 0 (affinity.hpp). The thread rule:
 * LibTorch's intra-op pool, OpenMP (set by LibTorch with it) and the BLAS's own pool are all
 * sized to it, so a rank runs one busy thread per core of its share. Any other device:
 * ConfigError.
 */
DeviceBinding bind_threads(const Runtime& runtime, const std::string& device, int gpu_index,
                           int threads);

/** @brief The thread count bind_threads uses: `requested`, or the rank's `cores` if 0. */
int choose_threads(int requested, int cores);
/**
 * @brief The GPU index for `local_rank` among the `devices` this process sees: local_rank %
 * devices. That is the local rank when every task sees all of a node's GPUs, and one of the
 * task's own when each sees only its own (srun --gpus-per-task, a per-task CUDA_VISIBLE_DEVICES);
 * when ranks would end up on one GPU, shared_gpu names them. ConfigError naming the host when
 * there is no GPU (`why_none` says why, e.g. no driver).
 */
int choose_gpu(int local_rank, int local_size, int devices, const std::string& host,
               const std::string& why_none);

/** @brief One rank's GPU as the shared-GPU check sees it. */
struct GpuIdentity {
  std::string host;
  std::string uuid;  ///< the device's UUID (unique across a host's GPUs)
};

/**
 * @brief "" when no two ranks on one host hold the same GPU, else a message naming the ranks,
 * the host and the remedy. Pure: `gpus` is indexed by world rank.
 */
std::string shared_gpu(const std::vector<GpuIdentity>& gpus);

}  // namespace slimtrain::runtime
