#include "slimtrain/comm/communicator.hpp"

#include <cstring>
#include <vector>

namespace slimtrain::comm {

// Small blocking payloads go through a buffer the operation owns, so a caller that timed out
// can free its own buffer while the operation still drains; big ones are reduced in place
// because an extra copy would cost as much as the reduction itself.
void Communicator::all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op,
                              const OpOptions& options) {
  const std::size_t bytes = count * dtype_size(dtype);
  if (data == nullptr || bytes == 0 || bytes > kStagedBytes) {
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
  if (data == nullptr || bytes == 0 || bytes > kStagedBytes) {
    broadcast_async(data, count, dtype, root, options)->wait();
    return;
  }
  auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(data),
                                                    static_cast<const char*>(data) + bytes);
  broadcast_async(staged->data(), count, dtype, root, options, staged)->wait();
  std::memcpy(data, staged->data(), bytes);
}

}  // namespace slimtrain::comm
