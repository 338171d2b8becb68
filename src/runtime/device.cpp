#include "slimtrain/runtime/device.hpp"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <map>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "slimtrain/core/check_gpu.hpp"
#endif

namespace slimtrain::runtime {
namespace {
#ifdef SLIMTRAIN_HAVE_NCCL
std::string device_uuid(int index) {
  cudaDeviceProp prop{};
  SLIMTRAIN_CHECK_CUDA(cudaGetDeviceProperties(&prop, index));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    const auto byte = static_cast<unsigned char>(prop.uuid.bytes[i]);
    out += hex[byte >> 4];
    out += hex[byte & 15];
  }
  return out;
}
#endif
}  // namespace

std::string DeviceBinding::describe() const {
  std::string out = kind;
  if (index >= 0) out += ":" + std::to_string(index);
  out += ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  return out;
}

int choose_threads(int requested, int cores) {
  if (requested < 0) {
    SLIMTRAIN_THROW(
        ConfigError,
        "--threads must be >= 0 (0 = the cores this rank's affinity mask gives it), got ",
        requested);
  }
  return requested > 0 ? requested : std::max(1, cores);
}

int choose_gpu(int local_rank, int local_size, int devices, const std::string& host,
               const std::string& why_none) {
  if (devices <= 0) {
    SLIMTRAIN_THROW(ConfigError, "--device cuda: no usable GPU on host ", host,
                    why_none.empty() ? "" : " (", why_none, why_none.empty() ? "" : ")");
  }
  (void)local_size;
  // Fewer visible GPUs than local ranks is right when each task sees its own (srun
  // --gpus-per-task); when they are the same GPUs, shared_gpu names the ranks that collide.
  return local_rank % devices;
}

std::string shared_gpu(const std::vector<GpuIdentity>& gpus) {
  std::map<std::pair<std::string, std::string>, std::vector<int>> holders;
  for (std::size_t r = 0; r < gpus.size(); ++r)
    holders[{gpus[r].host, gpus[r].uuid}].push_back(static_cast<int>(r));
  for (const auto& [key, ranks] : holders) {
    if (ranks.size() < 2) continue;
    std::string list;
    for (int r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
    return detail::concat("--device cuda: ranks ", list, " on host ", key.first,
                          " would share GPU ", key.second,
                          " (NCCL needs one GPU per rank); start at most one rank per GPU, or "
                          "give each task its own (srun --gpus-per-task=1)");
  }
  return "";
}

GpuChoice find_gpu(const Runtime& runtime) {
  GpuChoice gpu;
#ifdef SLIMTRAIN_HAVE_NCCL
  int count = 0;
  std::string why;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    // Without a driver the runtime reports an error rather than zero devices.
    why = cudaGetErrorString(rc);
    count = 0;
  }
  try {
    gpu.index =
        choose_gpu(runtime.local_rank(), runtime.local_size(), count, runtime.hostname(), why);
    if (!torch::cuda::is_available()) {
      gpu.problem =
          "--device cuda: this slimtrain's LibTorch was built without CUDA (Debian's libtorch is "
          "CPU-only); build against a CUDA LibTorch, see INSTALL.md";
    } else {
      gpu.uuid = device_uuid(gpu.index);
    }
  } catch (const Error& e) {
    gpu.problem = e.what();
  }
#else
  (void)runtime;
  gpu.problem =
      "--device cuda: this slimtrain was built without CUDA (configure with "
      "-DSLIMTRAIN_WITH_NCCL=ON on a CUDA machine)";
#endif
  return gpu;
}

std::uint64_t gpu_free_bytes(int index) {
#ifdef SLIMTRAIN_HAVE_NCCL
  int current = 0;
  SLIMTRAIN_CHECK_CUDA(cudaGetDevice(&current));
  SLIMTRAIN_CHECK_CUDA(cudaSetDevice(index));
  std::size_t free = 0, total = 0;
  const cudaError_t rc = cudaMemGetInfo(&free, &total);
  SLIMTRAIN_CHECK_CUDA(cudaSetDevice(current));
  return rc == cudaSuccess ? free : 0;
#else
  (void)index;
  return 0;
#endif
}

void use_gpu(int index) {
#ifdef SLIMTRAIN_HAVE_NCCL
  SLIMTRAIN_CHECK_CUDA(cudaSetDevice(index));
#else
  SLIMTRAIN_THROW(ConfigError, "GPU ", index, ": this slimtrain was built without CUDA");
#endif
}

DeviceBinding bind_threads(const Runtime& runtime, const std::string& device, int gpu_index,
                           int threads) {
  if (device != "cpu" && device != "cuda")
    SLIMTRAIN_THROW(ConfigError, "--device: unknown device '", device, "' (expected cpu or cuda)");
  DeviceBinding binding;
  binding.kind = device;
  binding.index = device == "cuda" ? gpu_index : -1;
  binding.cores = runtime.cores();
  binding.threads = choose_threads(threads, binding.cores);
  at::set_num_threads(binding.threads);
  binding.blas = detect_blas();
  binding.blas_threads = set_blas_threads(binding.blas, binding.threads);
  log::debug("bound to ", binding.describe(), " (local rank ", runtime.local_rank(), " of ",
             runtime.local_size(), " on ", runtime.hostname(), ")");
  return binding;
}

}  // namespace slimtrain::runtime
