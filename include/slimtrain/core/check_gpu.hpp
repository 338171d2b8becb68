#pragma once
/** @brief CHECK_CUDA and CHECK_NCCL; only compiled where the CUDA/NCCL backend is built. */
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "slimtrain/core/error.hpp"

namespace slimtrain::detail {
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line);
}  // namespace slimtrain::detail

#define SLIMTRAIN_CHECK_CUDA(call)                                                          \
  do {                                                                                      \
    const cudaError_t slimtrain_cuda_rc_ = (call);                                          \
    if (slimtrain_cuda_rc_ != cudaSuccess)                                                  \
      ::slimtrain::detail::throw_cuda_error(slimtrain_cuda_rc_, #call, __FILE__, __LINE__); \
  } while (0)

/** @brief ncclInProgress is success for non-blocking communicators: completion is polled later. */
#define SLIMTRAIN_CHECK_NCCL(call)                                                          \
  do {                                                                                      \
    const ncclResult_t slimtrain_nccl_rc_ = (call);                                         \
    if (slimtrain_nccl_rc_ != ncclSuccess && slimtrain_nccl_rc_ != ncclInProgress)          \
      ::slimtrain::detail::throw_nccl_error(slimtrain_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)
