#pragma once
/** @brief LibTorch adapter: collectives on contiguous tensors. */
#include <torch/torch.h>

#include <memory>

#include "slimtrain/comm/communicator.hpp"

namespace slimtrain::comm {

/** @brief The DType of `t`; throws ConfigError for unsupported dtypes. */
DType dtype_of(const torch::Tensor& t);
/** @brief In-place all-reduce of a contiguous tensor on the communicator's device kind. */
void all_reduce(Communicator& comm, torch::Tensor& t, ReduceOp op, const OpOptions& options = {});
/** @brief As all_reduce; the operation keeps `t`'s storage alive until it has finished. */
std::shared_ptr<Work> all_reduce_async(Communicator& comm, torch::Tensor& t, ReduceOp op,
                                       const OpOptions& options = {});
/** @brief In-place broadcast of a contiguous tensor from `root`. */
void broadcast(Communicator& comm, torch::Tensor& t, int root, const OpOptions& options = {});

}  // namespace slimtrain::comm
