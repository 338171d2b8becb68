// Waiting on one NCCL operation (detail/nccl_queue.hpp); the watchdog holds its deadline.
#include "slimtrain/comm/detail/nccl_queue.hpp"
#include "slimtrain/core/check_gpu.hpp"

namespace slimtrain::comm::impl {

void NcclWork::wait() {
  std::lock_guard<std::timed_mutex> lock(state_->mutex);
  state_->throw_if_failed();
  // Kernels the caller enqueues from now on read the results: order them after the collective
  // on the GPU. The host does not wait for it: the watchdog holds the deadline.
  if (!op_->enqueued) state_->finish_enqueue(*op_);
  if (!ordered_) {
    SLIMTRAIN_CHECK_CUDA(cudaStreamWaitEvent(compute_stream(state_->device), op_->done->get(), 0));
    ordered_ = true;
  }
}

void NcclState::throw_if_failed() {
  if (watch) watch->throw_if_failed();
  if (aborted.load())
    SLIMTRAIN_THROW(CommError, name, ": the NCCL communicator was aborted",
                    abort_reason.empty() ? "" : " (" + abort_reason + ")");
}

}  // namespace slimtrain::comm::impl
