#include "slimtrain/comm/communicator.hpp"

#include <cstring>
#include <vector>

#include "slimtrain/comm/mpi_communicator.hpp"
#include "slimtrain/core/error.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include "slimtrain/comm/nccl_communicator.hpp"
#endif

namespace slimtrain::comm {

// Small blocking payloads go through a buffer the operation owns, so a caller that timed out
// can free its own buffer while the operation still drains; big ones are reduced in place
// because an extra copy would cost as much as the reduction itself.
void Communicator::all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op,
                              const OpOptions& options) {
  const std::size_t bytes = count * dtype_size(dtype);
  if (data == nullptr || bytes == 0 || bytes > kStagedBytes ||
      std::strcmp(device_kind(), "cpu") != 0) {
    all_reduce_async(data, count, dtype, op, options)->wait();
    return;
  }
  auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(data),
                                                    static_cast<const char*>(data) + bytes);
  all_reduce_async(staged->data(), count, dtype, op, options, staged)->wait();
  std::memcpy(data, staged->data(), bytes);
}

void Communicator::broadcast(void* data, std::size_t count, DType dtype, int root,
                             const OpOptions& options) {
  const std::size_t bytes = count * dtype_size(dtype);
  if (data == nullptr || bytes == 0 || bytes > kStagedBytes ||
      std::strcmp(device_kind(), "cpu") != 0) {
    broadcast_async(data, count, dtype, root, options)->wait();
    return;
  }
  auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(data),
                                                    static_cast<const char*>(data) + bytes);
  broadcast_async(staged->data(), count, dtype, root, options, staged)->wait();
  std::memcpy(data, staged->data(), bytes);
}

std::unique_ptr<Communicator> make_communicator(const runtime::Runtime& runtime, std::string name,
                                                const std::string& device_kind,
                                                const CommConfig& config) {
  if (device_kind == "cpu") return make_mpi_communicator(runtime, std::move(name), config);
  if (device_kind == "cuda") {
#ifdef SLIMTRAIN_HAVE_NCCL
    return make_nccl_communicator(runtime, std::move(name), config);
#else
    SLIMTRAIN_THROW(ConfigError,
                    "--device cuda: this slimtrain was built without CUDA/NCCL "
                    "(configure with -DSLIMTRAIN_WITH_NCCL=ON on a CUDA machine)");
#endif
  }
  SLIMTRAIN_THROW(ConfigError, "--device: unknown device kind '", device_kind,
                  "' (expected cpu or cuda)");
}

}  // namespace slimtrain::comm
