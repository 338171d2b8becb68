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

bool EventEnd::reached() {
  const cudaError_t state = cudaEventQuery(event_.get());
  if (state == cudaSuccess) return true;
  if (state == cudaErrorNotReady) return false;
  cudaGetLastError();  // the query's error is reported here, not by the next CUDA call
  SLIMTRAIN_THROW(CommError, "the end event of an NCCL operation: ", cudaGetErrorString(state));
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
  if (aborted.exchange(true)) return;
  abort_reason = reason;
  log::error(name, ": aborting the NCCL communicator: ", reason);
  ncclCommAbort(comm);
}

void NcclState::fail(std::exception_ptr error, const std::string& reason) {
  if (watch) {
    watch->fail(std::move(error));  // the watchdog aborts at its next look
    return;
  }
  abort(reason);
}

WatchHooks NcclState::watch_hooks(std::function<void(const std::string&)> end_job) {
  WatchHooks hooks;
  // A raw pointer: the hooks live in the state's own watchdog, which is stopped before the state
  // goes, and its abort either returned or ended the job by then.
  NcclState* s = this;
  const int gpu = device;
  const double grace_s = config.deadline.grace_s;
  hooks.thread_start = [gpu] {
    // Events and the abort belong to the communicator's GPU, not to device 0.
    const cudaError_t set = cudaSetDevice(gpu);
    if (set != cudaSuccess)
      log::error("the NCCL watchdog cannot select cuda:", gpu, ": ", cudaGetErrorString(set));
  };
  hooks.async_error = [s]() -> std::string {
    if (s->aborted.load()) return {};
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(s->comm, &state);
    if (asked != ncclSuccess) return ncclGetErrorString(asked);
    return state == ncclSuccess || state == ncclInProgress ? std::string()
                                                           : ncclGetErrorString(state);
  };
  hooks.missed = [s, grace_s](const WatchedOp& op) {
    return missed_deadline({s->name, s->id, op.summary, op.timeout_s}, *s->inspector, grace_s,
                           s->recorder);
  };
  hooks.finished = [s](const WatchedOp& op) {
    s->recorder.ended(op.summary.seq, OpStatus::done);
    std::uint64_t done = s->progress->completed.load();
    while (op.summary.seq > done &&
           !s->progress->completed.compare_exchange_weak(done, op.summary.seq)) {
    }
    s->progress->clear_current(op.summary.seq);
  };
  hooks.abort = [s, gpu](const std::string& reason) {
    cudaSetDevice(gpu);
    // Under the callers' lock when a caller is not inside NCCL: none then uses the communicator
    // as it goes. A caller stuck in NCCL holds it past the wait: abort is what frees it.
    std::unique_lock<std::timed_mutex> lock(s->mutex, std::defer_lock);
    const bool locked = lock.try_lock_for(kAbortLockWait);
    s->aborted.store(true);
    log::error(s->name, ": aborting the NCCL communicator",
               locked ? "" : " (a caller is inside NCCL)", ": ", reason);
    ncclCommAbort(s->comm);
  };
  hooks.end_job = std::move(end_job);
  return hooks;
}

void NcclState::publish_current() {
  if (outstanding.empty()) return;
  const OpSummary& s = outstanding.front()->watched->summary;
  progress->set_current(s.seq, s.kind, s.bytes, s.tag.c_str());
}

bool NcclState::try_enqueued(NcclOp& op) {
  if (op.enqueued) return true;
  throw_if_failed();  // the communicator may be gone
  ncclResult_t state = ncclSuccess;
  SLIMTRAIN_CHECK_NCCL(ncclCommGetAsyncError(comm, &state));
  if (state == ncclInProgress) return false;
  if (state != ncclSuccess) {
    const std::string what = detail::concat(name, " ", op.watched->summary.describe(),
                                            " failed: ", ncclGetErrorString(state));
    const auto error = std::make_exception_ptr(CommError(what, __FILE__, __LINE__));
    fail(error, what);
    std::rethrow_exception(error);
  }
  SLIMTRAIN_CHECK_CUDA(cudaEventRecord(op.done->get(), stream));
  if (watch) watch->set_end(*op.watched, op.done);
  op.enqueued = true;
  if (pending.get() == &op) pending.reset();
  return true;
}

void NcclState::finish_enqueue(NcclOp& op) {
  // The watchdog holds the deadline of an operation still being enqueued; this is only the
  // backstop should it not (its report takes the grace, the caller's grace follows).
  const Clock::time_point backstop =
      op.watched->deadline +
      std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(config.deadline.grace_s + kCallerGraceS));
  while (!try_enqueued(op)) {
    if (Clock::now() > backstop) {
      const std::string what = detail::concat(name, " ", op.watched->summary.describe(),
                                              " was not enqueued before its deadline");
      const auto error = std::make_exception_ptr(TimeoutError(what, {}, __FILE__, __LINE__));
      fail(error, what);
      std::rethrow_exception(error);
    }
    std::this_thread::sleep_for(kNcclPollSleep);
  }
}

void NcclState::reap() {
  while (!outstanding.empty()) {
    NcclOp& op = *outstanding.front();
    if (!try_enqueued(op)) break;
    const bool ended = watch ? watch->poll(*op.watched) : op.done->reached();
    if (!ended) break;
    op.keep_alive.reset();
    outstanding.pop_front();
  }
  publish_current();
}

bool NcclState::settled() {
  throw_if_failed();
  reap();
  return outstanding.empty();
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
  op->watched = std::make_shared<WatchedOp>();
  OpSummary& summary = op->watched->summary;
  summary.seq = ++next_seq;
  summary.kind = kind;
  summary.bytes = bytes;
  summary.tag = options.tag ? options.tag : "";
  op->watched->timeout_s =
      options.timeout_s >= 0 ? options.timeout_s : config.deadline.deadline_for(bytes);
  op->watched->deadline = after(op->watched->timeout_s);
  op->keep_alive = std::move(keep_alive);
  progress->issued.store(summary.seq);
  recorder.enqueued(summary.seq, to_string(kind), to_string(dtype), bytes, summary.tag);
  // Watched before any NCCL call: a launch that blocks in the driver is still held to its deadline.
  if (watch) watch->add(op->watched);
  // The NCCL stream starts once the compute stream has written the inputs.
  SLIMTRAIN_CHECK_CUDA(cudaEventRecord(op->ready.get(), compute_stream(device)));
  SLIMTRAIN_CHECK_CUDA(cudaStreamWaitEvent(stream, op->ready.get(), 0));
  recorder.started(summary.seq);
  // All pieces in one group, enqueued back to back. A failing piece still closes the group:
  // an open group would silently batch every later NCCL call of this thread.
  SLIMTRAIN_CHECK_NCCL(ncclGroupStart());
  try {
    enqueue_pieces();
  } catch (const Error& e) {
    ncclGroupEnd();
    fail(std::current_exception(), e.what());
    throw;
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (ended != ncclSuccess && ended != ncclInProgress) {
    const std::string what = detail::concat(name, " ", summary.describe(),
                                            ": ncclGroupEnd failed: ", ncclGetErrorString(ended));
    const auto error = std::make_exception_ptr(CommError(what, __FILE__, __LINE__));
    fail(error, what);
    std::rethrow_exception(error);
  }
  outstanding.push_back(op);
  pending = op;
  try_enqueued(*op);  // usually at once; else later, without holding this thread up
  publish_current();
  return op;
}

}  // namespace slimtrain::comm::impl
