#pragma once
/** @brief Binds each rank to its device: one GPU per local rank, or a share of the CPU cores. */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
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

/**
 * @brief device "cuda": one GPU per rank (choose_gpu, then cudaSetDevice), checked over the
 * control plane so that no two ranks of a host share a GPU; ConfigError when they would, when
 * there is no GPU, or when slimtrain or its LibTorch was built without CUDA. device "cpu":
 * LibTorch intra-op threads = `threads`, or Runtime::cores() when 0 (affinity.hpp). Any
 * other device: ConfigError. Collective over `control` for cuda.
 * The thread rule: LibTorch's intra-op pool, OpenMP (set by LibTorch with it) and the BLAS's own
 * pool are all sized to `threads`, so a rank runs one busy thread per core of its share.
 */
DeviceBinding bind_device(const Runtime& runtime, comm::ControlPlane& control,
                          const std::string& device, int threads);

/** @brief The thread count bind_device uses: `requested`, or the rank's `cores` if 0. */
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
