#include "slimtrain/comm/tensor_ops.hpp"

#include <cstring>

#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {
namespace {
void check_tensor(const Communicator& comm, const torch::Tensor& t, const char* what) {
  if (!t.defined()) SLIMTRAIN_THROW(ConfigError, comm.name(), " ", what, ": undefined tensor");
  if (!t.is_contiguous()) {
    SLIMTRAIN_THROW(ConfigError, comm.name(), " ", what, ": tensor of shape ", t.sizes(),
                    " is not contiguous (call .contiguous() first)");
  }
  const bool want_cuda = std::strcmp(comm.device_kind(), "cuda") == 0;
  if (t.is_cuda() != want_cuda) {
    SLIMTRAIN_THROW(ConfigError, comm.name(), " ", what, ": tensor on ", t.device(),
                    " but the communicator moves ", comm.device_kind(), " memory");
  }
}
}  // namespace

DType dtype_of(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat:
      return DType::f32;
    case torch::kDouble:
      return DType::f64;
    case torch::kLong:
      return DType::i64;
    case torch::kHalf:
      return DType::f16;
    case torch::kBFloat16:
      return DType::bf16;
    default:
      break;
  }
  SLIMTRAIN_THROW(ConfigError, "tensor dtype ", t.scalar_type(),
                  " is not supported by collectives (use float32, float64, int64, float16 or "
                  "bfloat16)");
}

void all_reduce(Communicator& comm, torch::Tensor& t, ReduceOp op, const OpOptions& options) {
  all_reduce_async(comm, t, op, options)->wait();
}

std::shared_ptr<Work> all_reduce_async(Communicator& comm, torch::Tensor& t, ReduceOp op,
                                       const OpOptions& options) {
  check_tensor(comm, t, "all_reduce");
  const DType dtype = dtype_of(t);
  return comm.all_reduce_async(t.data_ptr(), static_cast<std::size_t>(t.numel()), dtype, op,
                               options, std::make_shared<torch::Tensor>(t));
}

void broadcast(Communicator& comm, torch::Tensor& t, int root, const OpOptions& options) {
  check_tensor(comm, t, "broadcast");
  const DType dtype = dtype_of(t);
  comm.broadcast_async(t.data_ptr(), static_cast<std::size_t>(t.numel()), dtype, root, options,
                       std::make_shared<torch::Tensor>(t))
      ->wait();
}

}  // namespace slimtrain::comm
