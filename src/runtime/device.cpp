#include "slimtrain/runtime/device.hpp"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "slimtrain/core/check_gpu.hpp"
#endif

namespace slimtrain::runtime {

std::string DeviceBinding::describe() const {
  std::string out = kind;
  if (index >= 0) out += ":" + std::to_string(index);
  out += ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  return out;
}

int choose_threads(int requested, int cores, int local_size) {
  if (requested < 0) {
    SLIMTRAIN_THROW(ConfigError, "--threads must be >= 0 (0 = cores / local ranks), got ",
                    requested);
  }
  if (requested > 0) return requested;
  return std::max(1, cores / std::max(1, local_size));
}

int choose_gpu(int local_rank, int local_size, int devices, const std::string& host,
               const std::string& why_none) {
  if (devices <= 0) {
    SLIMTRAIN_THROW(ConfigError, "--device cuda: no usable GPU on host ", host,
                    why_none.empty() ? "" : " (", why_none, why_none.empty() ? "" : ")");
  }
  if (local_size > devices) {
    SLIMTRAIN_THROW(ConfigError, "--device cuda: ", local_size, " ranks on host ", host,
                    " but only ", devices, " GPU", devices == 1 ? "" : "s",
                    "; start at most one rank per GPU");
  }
  return local_rank;
}

int cores_per_rank(int local_size) {
  const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    const int bound = CPU_COUNT(&mask);
    if (bound > 0 && bound < machine) return bound;
  }
  return std::max(1, machine / std::max(1, local_size));
}

DeviceBinding bind_device(const Runtime& runtime, const std::string& device, int threads) {
  DeviceBinding binding;
  binding.cores = cores_per_rank(runtime.local_size());
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  binding.threads = choose_threads(threads, cores, runtime.local_size());
  if (device == "cuda") {
#ifdef SLIMTRAIN_HAVE_NCCL
    int count = 0;
    std::string why;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      // Without a driver the runtime reports an error rather than zero devices.
      why = cudaGetErrorString(rc);
      count = 0;
    }
    binding.index =
        choose_gpu(runtime.local_rank(), runtime.local_size(), count, runtime.hostname(), why);
    SLIMTRAIN_CHECK_CUDA(cudaSetDevice(binding.index));
#else
    SLIMTRAIN_THROW(ConfigError,
                    "--device cuda: this slimtrain was built without CUDA "
                    "(configure with -DSLIMTRAIN_WITH_NCCL=ON on a CUDA machine)");
#endif
  } else if (device != "cpu") {
    SLIMTRAIN_THROW(ConfigError, "--device: unknown device '", device, "' (expected cpu or cuda)");
  }
  binding.kind = device;
  at::set_num_threads(binding.threads);
  log::debug("bound to ", binding.describe(), " (local rank ", runtime.local_rank(), " of ",
             runtime.local_size(), " on ", runtime.hostname(), ")");
  return binding;
}

}  // namespace slimtrain::runtime
