#include "slimtrain/train/device_setup.hpp"

#include <exception>
#include <vector>

#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/comm/words.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::train {
namespace {

// A hostname and a UUID per rank, 64 bytes each: the shared-GPU check's record.
constexpr std::size_t kSlotWords = 8;

int bind_gpu(const runtime::Runtime& rt, comm::ControlPlane& control) {
  const runtime::GpuChoice gpu = runtime::find_gpu(rt);
  comm::agree_or_throw(control, gpu.problem.empty() ? nullptr
                                                    : std::make_exception_ptr(ConfigError(
                                                          gpu.problem, __FILE__, __LINE__)));
  std::vector<std::int64_t> mine(2 * kSlotWords);
  comm::pack_text(rt.hostname(), mine.data(), kSlotWords);
  comm::pack_text(gpu.uuid, mine.data() + kSlotWords, kSlotWords);
  const std::vector<std::int64_t> all = control.all_gather(mine);
  std::vector<runtime::GpuIdentity> gpus;
  for (int r = 0; r < rt.size(); ++r) {
    const std::int64_t* slot = all.data() + static_cast<std::size_t>(r) * 2 * kSlotWords;
    gpus.push_back(
        {comm::unpack_text(slot, kSlotWords), comm::unpack_text(slot + kSlotWords, kSlotWords)});
  }
  const std::string shared = runtime::shared_gpu(gpus);  // the same verdict on every rank
  if (!shared.empty()) throw ConfigError(shared, __FILE__, __LINE__);
  runtime::use_gpu(gpu.index);
  return gpu.index;
}

}  // namespace

runtime::DeviceBinding bind_device(const runtime::Runtime& runtime, comm::ControlPlane& control,
                                   const std::string& device, int threads) {
  const int index = device == "cuda" ? bind_gpu(runtime, control) : -1;
  return runtime::bind_threads(runtime, device, index, threads);
}

}  // namespace slimtrain::train
