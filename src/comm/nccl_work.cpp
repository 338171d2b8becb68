// Waiting on one NCCL operation under its deadline (detail/nccl_queue.hpp).
#include <thread>

#include "slimtrain/comm/detail/nccl_queue.hpp"
#include "slimtrain/core/check_gpu.hpp"

namespace slimtrain::comm::impl {

void NcclWork::wait() {
  if (timeout_) std::rethrow_exception(timeout_);
  std::unique_lock<std::mutex> lock(state_->mutex);
  // Kernels the caller enqueues from now on read the results: order them after the collective
  // on the GPU, whatever the host sees below.
  if (!op_->enqueued && !state_->aborted) {
    try {
      state_->finish_enqueue(*op_);
    } catch (const TimeoutError&) {
      timeout_ = std::current_exception();
      throw;
    }
  }
  if (!ordered_ && !state_->aborted) {
    SLIMTRAIN_CHECK_CUDA(cudaStreamWaitEvent(compute_stream(state_->device), op_->done.get(), 0));
    ordered_ = true;
  }
  // The host polls only to enforce the deadline, letting go of the lock between looks so hooks
  // on other threads can launch.
  for (;;) {
    if (op_->finished) return;
    if (state_->aborted) {
      SLIMTRAIN_THROW(CommError, state_->name, " ", op_->summary.describe(),
                      ": the NCCL communicator was aborted (", state_->abort_reason, ")");
    }
    const cudaError_t q = cudaEventQuery(op_->done.get());
    if (q == cudaSuccess) {
      state_->reap();
      state_->finish(*op_);
      return;
    }
    if (q != cudaErrorNotReady) SLIMTRAIN_CHECK_CUDA(q);
    ncclResult_t async = ncclSuccess;
    SLIMTRAIN_CHECK_NCCL(ncclCommGetAsyncError(state_->comm, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
      state_->abort(ncclGetErrorString(async));
      SLIMTRAIN_THROW(CommError, state_->name, " ", op_->summary.describe(),
                      " failed: ", ncclGetErrorString(async));
    }
    if (Clock::now() > op_->deadline) {
      timeout_ = std::make_exception_ptr(state_->timeout(*op_));
      std::rethrow_exception(timeout_);
    }
    lock.unlock();
    std::this_thread::sleep_for(kNcclPollSleep);
    lock.lock();
  }
}

}  // namespace slimtrain::comm::impl
