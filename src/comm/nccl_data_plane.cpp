#include "slimtrain/comm/nccl_data_plane.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "slimtrain/comm/chunking.hpp"
#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/check_gpu.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/runtime/runtime.hpp"
#ifdef SLIMTRAIN_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace slimtrain::comm {
namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPollSleep = std::chrono::microseconds(50);

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The stream the caller's kernels run on. Autograd hooks run on the engine's device thread, so
// this is asked at every call rather than once.
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

class Event {
 public:
  Event() { SLIMTRAIN_CHECK_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

struct NcclOp {
  OpSummary summary;
  double timeout_s = 0;
  Clock::time_point deadline;
  Event ready;  // on the compute stream: the inputs are written
  Event done;   // on the NCCL stream: the results are written (recorded once enqueued)
  std::shared_ptr<void> keep_alive;
  bool enqueued = false;  // NCCL has put the group's kernels on its stream
  bool finished = false;
};

struct State {
  std::string name;
  int rank = 0;
  int size = 1;
  int device = 0;
  CommConfig config;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  FlightRecorder recorder;
  std::shared_ptr<Progress> progress = std::make_shared<Progress>();
  std::shared_ptr<StallInspector> inspector;
  std::uint32_t id = 0;

  // One thread at a time issues NCCL calls (autograd hooks and the main thread both launch).
  std::recursive_mutex mutex;
  bool aborted = false;
  std::string abort_reason;
  std::uint64_t next_seq = 0;
  std::atomic<std::uint64_t> bytes_reduced{0};
  std::deque<std::shared_ptr<NcclOp>> outstanding;  // issue order
  // A group whose ncclGroupEnd answered ncclInProgress: NCCL enqueues it in the background (it
  // may wait for peers to connect on first use). Nothing waits for it until the next launch or a
  // wait(), so the step's control decision, which catches a desync, still runs meanwhile.
  std::shared_ptr<NcclOp> pending;

  explicit State(const CommConfig& c) : config(c), recorder(c.recorder_entries) {}

  // Non-blocking communicators may answer ncclInProgress; no new call until it settles.
  void settle(Clock::time_point deadline, const char* what) {
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
        throw TimeoutError(detail::concat(name, " ", what, " did not settle before its deadline"),
                           {}, __FILE__, __LINE__);
      }
      std::this_thread::sleep_for(kPollSleep);
    }
  }

  void abort(const std::string& reason) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (aborted) return;
    aborted = true;
    abort_reason = reason;
    log::error(name, ": aborting the NCCL communicator: ", reason);
    ncclCommAbort(comm);
  }

  void publish_current() {
    if (outstanding.empty()) return;
    const OpSummary& s = outstanding.front()->summary;
    progress->set_current(s.seq, s.kind, s.bytes, s.tag.c_str());
  }

  void finish(NcclOp& op) {
    if (op.finished) return;
    op.finished = true;
    op.keep_alive.reset();
    recorder.ended(op.summary.seq, OpStatus::done);
    if (op.summary.seq > progress->completed.load()) progress->completed.store(op.summary.seq);
    progress->clear_current(op.summary.seq);
  }

  // One look at a pending group: true once NCCL has enqueued it (its done event is recorded).
  bool try_enqueued(NcclOp& op) {
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

  // Until the pending group is enqueued, or its deadline (then the stall report, and abort).
  void finish_enqueue(NcclOp& op) {
    while (!try_enqueued(op)) {
      if (Clock::now() > op.deadline) throw timeout(op);
      std::this_thread::sleep_for(kPollSleep);
    }
  }

  // Releases finished operations in order, so `outstanding.front()` is the one running now.
  void reap() {
    while (!outstanding.empty()) {
      NcclOp& op = *outstanding.front();
      if (!op.finished && (!try_enqueued(op) || cudaEventQuery(op.done.get()) != cudaSuccess))
        break;
      finish(op);
      outstanding.pop_front();
    }
    publish_current();
  }

  std::shared_ptr<NcclOp> launch(OpKind kind, std::size_t bytes, DType dtype,
                                 const OpOptions& options, std::shared_ptr<void> keep_alive,
                                 const std::function<void()>& enqueue_pieces) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (aborted) {
      SLIMTRAIN_THROW(CommError, name, " ", to_string(kind),
                      ": the NCCL communicator was aborted earlier (", abort_reason, ")");
    }
    // Non-blocking NCCL takes no new call while a group is still being enqueued.
    if (pending) finish_enqueue(*pending);
    reap();
    auto op = std::make_shared<NcclOp>();
    op->summary.seq = ++next_seq;
    op->summary.kind = kind;
    op->summary.bytes = bytes;
    op->summary.tag = options.tag ? options.tag : "";
    op->timeout_s =
        options.timeout_s >= 0 ? options.timeout_s : config.deadline.deadline_for(bytes);
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

  TimeoutError timeout(NcclOp& op) {
    recorder.caller_timed_out(op.summary.seq);
    const StallReport report =
        analyse_stall(op.summary, inspector->inquire(id, config.deadline.grace_s));
    const std::string message =
        detail::concat(name, " ", op.summary.describe(), " missed its deadline of ", op.timeout_s,
                       " s; missing ranks: ", report.description, inspector->inquiry_scope());
    log::error(message);
    report_flight_recorder(recorder, name);
    abort(message);
    return TimeoutError(message, report.missing, __FILE__, __LINE__);
  }
};

class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<State> state, std::shared_ptr<NcclOp> op)
      : state_(std::move(state)), op_(std::move(op)) {}

  void wait() override {
    if (timeout_) std::rethrow_exception(timeout_);
    {
      // Kernels the caller enqueues from now on read the results: order them after the
      // collective on the GPU, whatever the host sees below.
      std::lock_guard<std::recursive_mutex> lock(state_->mutex);
      if (!op_->enqueued && !state_->aborted) {
        try {
          state_->finish_enqueue(*op_);
        } catch (const TimeoutError&) {
          timeout_ = std::current_exception();
          throw;
        }
      }
      if (!ordered_ && !state_->aborted) {
        SLIMTRAIN_CHECK_CUDA(
            cudaStreamWaitEvent(compute_stream(state_->device), op_->done.get(), 0));
        ordered_ = true;
      }
    }
    // The host polls only to enforce the deadline.
    for (;;) {
      {
        std::lock_guard<std::recursive_mutex> lock(state_->mutex);
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
      }
      if (Clock::now() > op_->deadline) {
        timeout_ = std::make_exception_ptr(state_->timeout(*op_));
        std::rethrow_exception(timeout_);
      }
      std::this_thread::sleep_for(kPollSleep);
    }
  }

 private:
  std::shared_ptr<State> state_;
  std::shared_ptr<NcclOp> op_;
  std::exception_ptr timeout_;
  bool ordered_ = false;
};

class NcclDataPlane final : public DataPlane {
 public:
  NcclDataPlane(const runtime::Runtime& runtime, const torch::Device& device, std::string name,
                const CommConfig& config)
      : DataPlane(device), state_(std::make_shared<State>(config)) {
    State& s = *state_;
    s.name = std::move(name);
    s.config.deadline.deadline_for(0);  // validates the policy up front
    s.device = device.index();
    int current = -1;
    SLIMTRAIN_CHECK_CUDA(cudaGetDevice(&current));
    if (current != s.device)
      SLIMTRAIN_THROW(ConfigError, s.name, ": data plane for cuda:", s.device,
                      " but the current CUDA device is ", current, " (runtime::bind_device)");
    int version = 0;
    SLIMTRAIN_CHECK_NCCL(ncclGetVersion(&version));
    // Non-blocking communicators (the deadline around every collective) came with NCCL 2.14.
    if (version < NCCL_VERSION(2, 14, 0))
      SLIMTRAIN_THROW(ConfigError, "--device cuda: the NCCL library loaded is version ", version,
                      "; slimtrain needs 2.14 or later (non-blocking communicators)");
    if (version != NCCL_VERSION_CODE)
      log::info_rank0("NCCL ", version, " loaded, built against ", NCCL_VERSION_CODE);
    s.rank = runtime.rank();
    s.size = runtime.size();
    s.inspector = StallInspector::acquire(runtime);
    s.id = s.inspector->add(s.progress, s.name);
    SLIMTRAIN_CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));

    ControlPlane bootstrap(runtime, s.name + "-bootstrap", config);
    const ncclUniqueId id = nccl_bootstrap_id(bootstrap, 0);
    ncclConfig_t nccl_config = NCCL_CONFIG_INITIALIZER;
    nccl_config.blocking = 0;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    nccl_config.commName = s.name.c_str();  // named in NCCL's own logs (2.27 on)
#endif
    SLIMTRAIN_CHECK_NCCL(ncclCommInitRankConfig(&s.comm, s.size, id, s.rank, &nccl_config));
    s.settle(after(s.config.deadline.base_s), "ncclCommInitRankConfig");
    // Every rank has its communicator before any rank issues a collective on it.
    bootstrap.barrier();
  }

  ~NcclDataPlane() override {
    State& s = *state_;
    std::unique_lock<std::recursive_mutex> lock(s.mutex);
    if (s.comm != nullptr && !s.aborted) {
      // While an exception unwinds (this rank failed), peers may never join: grace only.
      Clock::time_point limit = after(s.config.deadline.grace_s);
      if (std::uncaught_exceptions() == 0)
        for (const auto& op : s.outstanding) limit = std::max(limit, op->deadline);
      while (true) {
        try {
          s.reap();
        } catch (const Error& e) {
          log::error(e.what());
          break;
        }
        if (s.aborted || s.outstanding.empty() || Clock::now() > limit) break;
        std::this_thread::sleep_for(kPollSleep);
      }
      if (!s.outstanding.empty()) {
        s.abort("operations still outstanding at destruction");
      } else if (!s.aborted) {
        // Finalize flushes and, being non-blocking, settles under a deadline (abort if not).
        ncclCommFinalize(s.comm);
        try {
          s.settle(after(s.config.deadline.grace_s + s.config.deadline.base_s), "ncclCommFinalize");
        } catch (const Error& e) {
          log::error(e.what());
        }
      }
    }
    // ncclCommAbort already released an aborted communicator.
    if (s.comm != nullptr && !s.aborted) ncclCommDestroy(s.comm);
    // After an abort the stream holds no running NCCL kernels; wait for it before freeing.
    cudaStreamSynchronize(s.stream);
    s.outstanding.clear();
    cudaStreamDestroy(s.stream);
    s.inspector->remove(s.id);
  }

  const std::string& name() const override {
    return state_->name;
  }
  int rank() const override {
    return state_->rank;
  }
  int size() const override {
    return state_->size;
  }
  void set_floor_bandwidth(double bytes_per_s) override {
    DeadlinePolicy policy = state_->config.deadline;
    policy.floor_bytes_per_s = bytes_per_s;
    policy.deadline_for(0);  // validates
    std::lock_guard<std::recursive_mutex> lock(state_->mutex);
    state_->config.deadline = policy;
  }
  std::uint64_t bytes_reduced() const override {
    return state_->bytes_reduced.load();
  }
  void dump_flight_recorder() const override {
    report_flight_recorder(state_->recorder, state_->name);
  }

 protected:
  std::shared_ptr<Work> start_all_reduce(const torch::Tensor& t, DType dtype, ReduceOp op,
                                         const OpOptions& options) override {
    State& s = *state_;
    const std::size_t count = static_cast<std::size_t>(t.numel());
    const std::size_t element = dtype_size(dtype);
    void* data = t.data_ptr();
    s.bytes_reduced += count * element;
    auto launched = s.launch(
        OpKind::all_reduce, count * element, dtype, options, std::make_shared<torch::Tensor>(t),
        [&] {
          for (const Piece& p :
               plan_pieces(count, element, s.config.chunk_bytes, s.config.max_elements_per_call)) {
            void* ptr = static_cast<char*>(data) + p.offset * element;
            SLIMTRAIN_CHECK_NCCL(
                ncclAllReduce(ptr, ptr, p.count, nccl_type(dtype), nccl_op(op), s.comm, s.stream));
          }
        });
    return std::make_shared<NcclWork>(state_, launched);
  }

  std::shared_ptr<Work> start_broadcast(const torch::Tensor& t, DType dtype, int root,
                                        const OpOptions& options) override {
    State& s = *state_;
    const std::size_t count = static_cast<std::size_t>(t.numel());
    const std::size_t element = dtype_size(dtype);
    void* data = t.data_ptr();
    s.bytes_reduced += count * element;
    auto launched = s.launch(
        OpKind::broadcast, count * element, dtype, options, std::make_shared<torch::Tensor>(t),
        [&] {
          for (const Piece& p :
               plan_pieces(count, element, s.config.chunk_bytes, s.config.max_elements_per_call)) {
            void* ptr = static_cast<char*>(data) + p.offset * element;
            SLIMTRAIN_CHECK_NCCL(
                ncclBroadcast(ptr, ptr, p.count, nccl_type(dtype), root, s.comm, s.stream));
          }
        });
    return std::make_shared<NcclWork>(state_, launched);
  }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace

ncclUniqueId nccl_bootstrap_id(ControlPlane& control, int root) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::string bytes;
  if (control.rank() == root) {
    SLIMTRAIN_CHECK_NCCL(ncclGetUniqueId(&id));
    bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
  }
  OpOptions options;
  options.tag = "nccl-unique-id";
  bytes = control.broadcast(bytes, root, options);
  if (bytes.size() != sizeof id)
    SLIMTRAIN_THROW(CommError, control.name(), ": NCCL unique id of ", bytes.size(),
                    " bytes from rank ", root, ", expected ", sizeof id);
  std::memcpy(&id, bytes.data(), sizeof id);
  return id;
}

std::unique_ptr<DataPlane> make_nccl_data_plane(const runtime::Runtime& runtime,
                                                const torch::Device& device, std::string name,
                                                const CommConfig& config) {
  int index = device.index();
  if (index < 0) SLIMTRAIN_CHECK_CUDA(cudaGetDevice(&index));  // "cuda" means the current one
  return std::make_unique<NcclDataPlane>(
      runtime, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index)), std::move(name),
      config);
}

}  // namespace slimtrain::comm
