#include "slimtrain/core/check_gpu.hpp"

namespace slimtrain::detail {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CommError(concat(call, " failed: ", cudaGetErrorName(code), ": ", cudaGetErrorString(code)),
                  file, line);
}

void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line) {
  throw CommError(concat(call, " failed: ", ncclGetErrorString(code)), file, line);
}

}  // namespace slimtrain::detail
