#include "slimtrain/runtime/device.hpp"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstring>
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

// Text travels over the control plane as int64 words: a fixed 64-byte slot per rank.
constexpr std::size_t kSlotWords = 8;

std::vector<std::int64_t> pack_slot(const std::string& text) {
  std::vector<std::int64_t> words(kSlotWords, 0);
  std::memcpy(words.data(), text.data(), std::min(text.size(), kSlotWords * 8 - 1));
  return words;
}

std::string unpack_slot(const std::int64_t* words) {
  const char* p = reinterpret_cast<const char*>(words);
  return std::string(p, strnlen(p, kSlotWords * 8));
}

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

// Every check is agreed before the next step, so all ranks fail alike and none waits in a
// collective a failed rank never joins; the device is set only once no two ranks share it (on
// GPUs in exclusive-process mode the second context would fail with a raw CUDA error).
int bind_gpu(const Runtime& runtime, comm::ControlPlane& control) {
  auto agreed = [&control](std::string problem, const char* elsewhere) {
    if (control.agree(problem.empty())) return;
    throw ConfigError(problem.empty() ? std::string(elsewhere) : problem, __FILE__, __LINE__);
  };
  int count = 0;
  std::string why;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    // Without a driver the runtime reports an error rather than zero devices.
    why = cudaGetErrorString(rc);
    count = 0;
  }
  std::string problem;
  int index = -1;
  try {
    index = choose_gpu(runtime.local_rank(), runtime.local_size(), count, runtime.hostname(), why);
  } catch (const ConfigError& e) {
    problem = e.what();
  }
  agreed(problem, "--device cuda: another rank has no usable GPU (see its error)");
  if (!torch::cuda::is_available())
    problem =
        "--device cuda: this slimtrain's LibTorch was built without CUDA (Debian's libtorch is "
        "CPU-only); build against a CUDA LibTorch, see INSTALL.md";
  agreed(problem, "--device cuda: another rank's LibTorch has no CUDA (see its error)");

  std::vector<std::int64_t> mine = pack_slot(runtime.hostname());
  const std::vector<std::int64_t> uuid = pack_slot(device_uuid(index));
  mine.insert(mine.end(), uuid.begin(), uuid.end());
  const std::vector<std::int64_t> all = control.all_gather(mine);
  std::vector<GpuIdentity> gpus;
  for (int r = 0; r < runtime.size(); ++r) {
    const std::int64_t* slot = all.data() + static_cast<std::size_t>(r) * 2 * kSlotWords;
    gpus.push_back({unpack_slot(slot), unpack_slot(slot + kSlotWords)});
  }
  const std::string shared = shared_gpu(gpus);  // the same verdict on every rank
  if (!shared.empty()) throw ConfigError(shared, __FILE__, __LINE__);
  SLIMTRAIN_CHECK_CUDA(cudaSetDevice(index));
  return index;
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

DeviceBinding bind_device(const Runtime& runtime, comm::ControlPlane& control,
                          const std::string& device, int threads) {
  DeviceBinding binding;
  binding.cores = runtime.cores();
  binding.threads = choose_threads(threads, binding.cores);
  if (device == "cuda") {
#ifdef SLIMTRAIN_HAVE_NCCL
    binding.index = bind_gpu(runtime, control);
#else
    (void)control;
    SLIMTRAIN_THROW(ConfigError,
                    "--device cuda: this slimtrain was built without CUDA "
                    "(configure with -DSLIMTRAIN_WITH_NCCL=ON on a CUDA machine)");
#endif
  } else if (device != "cpu") {
    SLIMTRAIN_THROW(ConfigError, "--device: unknown device '", device, "' (expected cpu or cuda)");
  }
  binding.kind = device;
  at::set_num_threads(binding.threads);
  binding.blas = detect_blas();
  binding.blas_threads = set_blas_threads(binding.blas, binding.threads);
  log::debug("bound to ", binding.describe(), " (local rank ", runtime.local_rank(), " of ",
             runtime.local_size(), " on ", runtime.hostname(), ")");
  return binding;
}

}  // namespace slimtrain::runtime
