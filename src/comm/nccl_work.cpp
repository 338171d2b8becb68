// Waiting on one NCCL operation, and the watchdog that holds its deadline (detail/nccl_queue.hpp).
#include "slimtrain/comm/detail/nccl_queue.hpp"
#include "slimtrain/core/check_gpu.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::comm::impl {

void NcclWork::wait() {
  if (timeout_) std::rethrow_exception(timeout_);
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->throw_if_failed();
  // Kernels the caller enqueues from now on read the results: order them after the collective
  // on the GPU. The host does not wait for it: the watchdog holds the deadline.
  if (!op_->enqueued) {
    try {
      state_->finish_enqueue(*op_);
    } catch (const TimeoutError&) {
      timeout_ = std::current_exception();
      throw;
    }
  }
  if (!ordered_) {
    SLIMTRAIN_CHECK_CUDA(cudaStreamWaitEvent(compute_stream(state_->device), op_->done.get(), 0));
    ordered_ = true;
  }
}

void NcclState::throw_if_failed() {
  if (failure) {
    failure_delivered = true;
    std::rethrow_exception(failure);
  }
  if (aborted)
    SLIMTRAIN_THROW(CommError, name, ": the NCCL communicator was aborted (", abort_reason, ")");
}

bool NcclState::watch() {
  if (failure) {
    // The caller has been told, or is given the grace period to come back and be told; a caller
    // stuck elsewhere would leave the job running with a dead communicator.
    const auto grace = std::chrono::duration<double>(config.deadline.grace_s + kCallerGraceS);
    return failure_delivered ||
           Clock::now() < failed_at + std::chrono::duration_cast<Clock::duration>(grace);
  }
  if (aborted) return true;
  try {
    reap();  // releases what finished, in issue order; enqueues a pending group
    for (const auto& op : outstanding) {
      if (op->finished) continue;
      if (Clock::now() > op->deadline) throw timeout(*op);
      break;  // later operations started after this one: their deadlines come later
    }
    ncclResult_t async = ncclSuccess;
    SLIMTRAIN_CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
      abort(ncclGetErrorString(async));
      SLIMTRAIN_THROW(CommError, name, ": NCCL reported an error: ", ncclGetErrorString(async));
    }
  } catch (const Error&) {
    failure = std::current_exception();
    failed_at = Clock::now();
    if (!aborted) abort("the watchdog's failure");
  }
  return true;
}

}  // namespace slimtrain::comm::impl
