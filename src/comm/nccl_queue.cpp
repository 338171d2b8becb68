// The NCCL data plane's operations in flight and its abort path (detail/nccl_queue.hpp).
#include "slimtrain/comm/detail/nccl_queue.hpp"

#include <thread>

#include "slimtrain/comm/missed_deadline.hpp"
#include "slimtrain/core/check_gpu.hpp"
#include "slimtrain/core/log.hpp"
#ifdef SLIMTRAIN_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace slimtrain::comm::impl {

cudaStream_t compute_stream(int device) {
#ifdef SLIMTRAIN_TORCH_CUDA
  return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
#else
  (void)device;
  return cudaStreamLegacy;  // a LibTorch without CUDA makes no CUDA tensors to reduce anyway
#endif
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return ncclFloat32;
    case DType::f64:
      return ncclFloat64;
    case DType::i64:
      return ncclInt64;
    case DType::f16:
      return ncclFloat16;
    case DType::bf16:
      return ncclBfloat16;
    case DType::u8:
      return ncclUint8;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::avg:
      return ncclAvg;
    case ReduceOp::max:
      return ncclMax;
    case ReduceOp::min:
      return ncclMin;
  }
  return ncclSum;
}

Event::Event() {
  SLIMTRAIN_CHECK_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
}

void NcclState::settle(Clock::time_point deadline, const char* what) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    SLIMTRAIN_CHECK_NCCL(ncclCommGetAsyncError(comm, &state));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      abort(std::string(what) + " failed: " + ncclGetErrorString(state));
      SLIMTRAIN_THROW(CommError, name, " ", what, " failed: ", ncclGetErrorString(state));
    }
    if (Clock::now() > deadline) {
      abort(std::string(what) + " did not settle before its deadline");
      throw TimeoutError(detail::concat(name, " ", what, " did not settle before its deadline"), {},
                         __FILE__, __LINE__);
    }
    std::this_thread::sleep_for(kNcclPollSleep);
  }
}

void NcclState::abort(const std::string& reason) {
  if (aborted) return;
  aborted = true;
  abort_reason = reason;
  log::error(name, ": aborting the NCCL communicator: ", reason);
  ncclCommAbort(comm);
}

void NcclState::publish_current() {
  if (outstanding.empty()) return;
  const OpSummary& s = outstanding.front()->summary;
  progress->set_current(s.seq, s.kind, s.bytes, s.tag.c_str());
}

void NcclState::finish(NcclOp& op) {
  if (op.finished) return;
  op.finished = true;
  op.keep_alive.reset();
  recorder.ended(op.summary.seq, OpStatus::done);
  if (op.summary.seq > progress->completed.load()) progress->completed.store(op.summary.seq);
  progress->clear_current(op.summary.seq);
}

bool NcclState::try_enqueued(NcclOp& op) {
  if (op.enqueued) return true;
  ncclResult_t state = ncclSuccess;
  SLIMTRAIN_CHECK_NCCL(ncclCommGetAsyncError(comm, &state));
  if (state == ncclInProgress) return false;
  if (state != ncclSuccess) {
    abort(op.summary.describe() + " failed: " + ncclGetErrorString(state));
    SLIMTRAIN_THROW(CommError, name, " ", op.summary.describe(),
                    " failed: ", ncclGetErrorString(state));
  }
  SLIMTRAIN_CHECK_CUDA(cudaEventRecord(op.done.get(), stream));
  op.enqueued = true;
  if (pending.get() == &op) pending.reset();
  return true;
}

void NcclState::finish_enqueue(NcclOp& op) {
  while (!try_enqueued(op)) {
    if (Clock::now() > op.deadline) throw timeout(op);
    std::this_thread::sleep_for(kNcclPollSleep);
  }
}

void NcclState::reap() {
  while (!outstanding.empty()) {
    NcclOp& op = *outstanding.front();
    if (!op.finished && (!try_enqueued(op) || cudaEventQuery(op.done.get()) != cudaSuccess)) break;
    finish(op);
    outstanding.pop_front();
  }
  publish_current();
}

std::shared_ptr<NcclOp> NcclState::launch(OpKind kind, std::size_t bytes, DType dtype,
                                          const OpOptions& options,
                                          std::shared_ptr<void> keep_alive,
                                          const std::function<void()>& enqueue_pieces) {
  throw_if_failed();  // what the watchdog found, or an earlier abort
  // Non-blocking NCCL takes no new call while a group is still being enqueued.
  if (pending) finish_enqueue(*pending);
  reap();
  auto op = std::make_shared<NcclOp>();
  op->summary.seq = ++next_seq;
  op->summary.kind = kind;
  op->summary.bytes = bytes;
  op->summary.tag = options.tag ? options.tag : "";
  op->timeout_s = options.timeout_s >= 0 ? options.timeout_s : config.deadline.deadline_for(bytes);
  op->deadline = after(op->timeout_s);
  op->keep_alive = std::move(keep_alive);
  progress->issued.store(op->summary.seq);
  recorder.enqueued(op->summary.seq, to_string(kind), to_string(dtype), bytes, op->summary.tag);
  // The NCCL stream starts once the compute stream has written the inputs.
  SLIMTRAIN_CHECK_CUDA(cudaEventRecord(op->ready.get(), compute_stream(device)));
  SLIMTRAIN_CHECK_CUDA(cudaStreamWaitEvent(stream, op->ready.get(), 0));
  recorder.started(op->summary.seq);
  // All pieces in one group, enqueued back to back. A failing piece still closes the group:
  // an open group would silently batch every later NCCL call of this thread.
  SLIMTRAIN_CHECK_NCCL(ncclGroupStart());
  try {
    enqueue_pieces();
  } catch (const Error& e) {
    ncclGroupEnd();
    abort(e.what());
    throw;
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (ended != ncclSuccess && ended != ncclInProgress) {
    abort(std::string("ncclGroupEnd failed: ") + ncclGetErrorString(ended));
    SLIMTRAIN_THROW(CommError, name, " ", op->summary.describe(),
                    ": ncclGroupEnd failed: ", ncclGetErrorString(ended));
  }
  outstanding.push_back(op);
  pending = op;
  try_enqueued(*op);  // usually at once; else later, without holding this thread up
  publish_current();
  return op;
}

TimeoutError NcclState::timeout(NcclOp& op) {
  TimeoutError error = missed_deadline({name, id, op.summary, op.timeout_s}, *inspector,
                                       config.deadline.grace_s, recorder);
  abort(error.what());
  return error;
}

}  // namespace slimtrain::comm::impl
