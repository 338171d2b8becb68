#include "slimtrain/comm/nccl_communicator.hpp"

#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "slimtrain/comm/chunking.hpp"
#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/check_gpu.hpp"
#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::comm {
namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPollSleep = std::chrono::microseconds(200);

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
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
  std::uint64_t seq = 0;
  const char* kind = "";
  std::size_t bytes = 0;
  double timeout_s = 0;
  Clock::time_point deadline;
  Event done;
  std::shared_ptr<void> keep_alive;
  bool finished = false;
};
}  // namespace

ncclUniqueId nccl_bootstrap_id(MPI_Comm comm, int root) {
  int rank = 0;
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (rank == root) SLIMTRAIN_CHECK_NCCL(ncclGetUniqueId(&id));
  SLIMTRAIN_CHECK_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, root, comm));
  return id;
}

struct NcclCommunicator::State {
  std::string name;
  int rank = 0;
  int size = 1;
  int device = 0;
  CommConfig config;
  MPI_Comm mpi = MPI_COMM_NULL;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaStream_t compute = nullptr;
  std::unique_ptr<Event> ready;
  int* device_word = nullptr;
  int* host_word = nullptr;
  FlightRecorder recorder;
  std::shared_ptr<Progress> progress = std::make_shared<Progress>();
  std::shared_ptr<StallInspector> inspector;
  std::uint32_t id = 0;

  // One thread at a time issues NCCL calls; waits only take it briefly.
  std::recursive_mutex mutex;
  bool aborted = false;
  std::string abort_reason;
  std::uint64_t next_seq = 0;
  std::atomic<std::uint64_t> bytes_reduced{0};
  std::vector<std::shared_ptr<NcclOp>> outstanding;

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

  void reap() {
    for (auto it = outstanding.begin(); it != outstanding.end();) {
      if ((*it)->finished || cudaEventQuery((*it)->done.get()) == cudaSuccess) {
        finish(**it);
        it = outstanding.erase(it);
      } else {
        ++it;
      }
    }
  }

  void finish(NcclOp& op) {
    if (op.finished) return;
    op.finished = true;
    op.keep_alive.reset();
    recorder.ended(op.seq, OpStatus::done);
    if (op.seq > progress->completed.load()) progress->completed.store(op.seq);
    // Later compute reads the result: order the compute stream after the collective.
    cudaStreamWaitEvent(compute, op.done.get(), 0);
  }

  std::shared_ptr<NcclOp> launch(const char* kind, std::size_t bytes, const char* dtype,
                                 const OpOptions& options, std::shared_ptr<void> keep_alive,
                                 const std::function<void(Clock::time_point)>& issue) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (aborted) {
      SLIMTRAIN_THROW(CommError, name, " ", kind, ": the NCCL communicator was aborted earlier (",
                      abort_reason, ")");
    }
    reap();
    auto op = std::make_shared<NcclOp>();
    op->kind = kind;
    op->bytes = bytes;
    op->timeout_s =
        options.timeout_s >= 0 ? options.timeout_s : config.deadline.deadline_for(bytes);
    op->deadline = after(op->timeout_s);
    op->keep_alive = std::move(keep_alive);
    op->seq = ++next_seq;
    progress->issued.store(op->seq);
    recorder.enqueued(op->seq, kind, dtype, bytes, options.tag ? options.tag : "");
    SLIMTRAIN_CHECK_CUDA(cudaEventRecord(ready->get(), compute));
    SLIMTRAIN_CHECK_CUDA(cudaStreamWaitEvent(stream, ready->get(), 0));
    recorder.started(op->seq);
    issue(op->deadline);
    SLIMTRAIN_CHECK_CUDA(cudaEventRecord(op->done.get(), stream));
    outstanding.push_back(op);
    return op;
  }

  TimeoutError timeout(const NcclOp& op) {
    recorder.caller_timed_out(op.seq);
    const StallReport report =
        analyse_stall(op.seq, inspector->inquire(id, config.deadline.grace_s));
    const std::string message = detail::concat(
        name, " ", op.kind, " seq ", op.seq, " of ", op.bytes, " bytes missed its deadline of ",
        op.timeout_s, " s; missing ranks: ", report.description);
    log::error(message);
    for (const std::string& line : recorder.format(name)) log::warn(line);
    abort(message);
    return TimeoutError(message, report.missing, __FILE__, __LINE__);
  }
};

namespace {
class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<NcclCommunicator::State> state, std::shared_ptr<NcclOp> op)
      : state_(std::move(state)), op_(std::move(op)) {}

  void wait() override {
    if (timeout_) std::rethrow_exception(timeout_);
    for (;;) {
      {
        std::lock_guard<std::recursive_mutex> lock(state_->mutex);
        if (op_->finished) return;
        if (state_->aborted) {
          SLIMTRAIN_THROW(CommError, state_->name, " ", op_->kind, " seq ", op_->seq,
                          ": the NCCL communicator was aborted (", state_->abort_reason, ")");
        }
        const cudaError_t q = cudaEventQuery(op_->done.get());
        if (q == cudaSuccess) {
          state_->finish(*op_);
          return;
        }
        if (q != cudaErrorNotReady) SLIMTRAIN_CHECK_CUDA(q);
        ncclResult_t async = ncclSuccess;
        SLIMTRAIN_CHECK_NCCL(ncclCommGetAsyncError(state_->comm, &async));
        if (async != ncclSuccess && async != ncclInProgress) {
          state_->abort(ncclGetErrorString(async));
          SLIMTRAIN_THROW(CommError, state_->name, " ", op_->kind, " seq ", op_->seq,
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

  bool completed() const override {
    std::lock_guard<std::recursive_mutex> lock(state_->mutex);
    if (!op_->finished && cudaEventQuery(op_->done.get()) == cudaSuccess) state_->finish(*op_);
    return op_->finished;
  }

 private:
  std::shared_ptr<NcclCommunicator::State> state_;
  std::shared_ptr<NcclOp> op_;
  std::exception_ptr timeout_;
};
}  // namespace

NcclCommunicator::NcclCommunicator(const runtime::Runtime& runtime, std::string name,
                                   const CommConfig& config)
    : state_(std::make_shared<State>(config)) {
  State& s = *state_;
  s.name = std::move(name);
  s.config.deadline.deadline_for(0);
  s.inspector = StallInspector::acquire();
  SLIMTRAIN_CHECK_MPI(MPI_Comm_dup(runtime.world(), &s.mpi));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_set_errhandler(s.mpi, MPI_ERRORS_RETURN));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(s.mpi, &s.rank));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(s.mpi, &s.size));
  s.id = s.inspector->add(s.progress);
  SLIMTRAIN_CHECK_CUDA(cudaGetDevice(&s.device));
  SLIMTRAIN_CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  s.ready = std::make_unique<Event>();
  SLIMTRAIN_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&s.device_word), sizeof(int)));
  SLIMTRAIN_CHECK_CUDA(cudaMallocHost(reinterpret_cast<void**>(&s.host_word), sizeof(int)));

  const ncclUniqueId id = nccl_bootstrap_id(s.mpi, 0);
  ncclConfig_t nccl_config = NCCL_CONFIG_INITIALIZER;
  nccl_config.blocking = 0;
  nccl_config.commName = s.name.c_str();
  SLIMTRAIN_CHECK_NCCL(ncclCommInitRankConfig(&s.comm, s.size, id, s.rank, &nccl_config));
  s.settle(after(s.config.deadline.base_s), "ncclCommInitRankConfig");
}

NcclCommunicator::~NcclCommunicator() {
  State& s = *state_;
  std::unique_lock<std::recursive_mutex> lock(s.mutex);
  if (s.comm != nullptr && !s.aborted) {
    Clock::time_point limit = after(s.config.deadline.grace_s);
    for (const auto& op : s.outstanding) limit = std::max(limit, op->deadline);
    while (true) {
      s.reap();
      if (s.outstanding.empty() || Clock::now() > limit) break;
      std::this_thread::sleep_for(kPollSleep);
    }
    if (!s.outstanding.empty()) {
      s.abort("operations still outstanding at destruction");
    } else {
      // Finalize flushes and, being non-blocking, settles under a deadline (abort if it cannot).
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
  // After an abort the stream holds no running NCCL kernels; wait for it before freeing buffers.
  cudaStreamSynchronize(s.stream);
  s.outstanding.clear();
  s.ready.reset();
  cudaFree(s.device_word);
  cudaFreeHost(s.host_word);
  cudaStreamDestroy(s.stream);
  s.inspector->remove(s.id);
  MPI_Comm_free(&s.mpi);
}

void NcclCommunicator::set_compute_stream(cudaStream_t stream) {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  state_->compute = stream;
}

int NcclCommunicator::rank() const {
  return state_->rank;
}
int NcclCommunicator::size() const {
  return state_->size;
}
const std::string& NcclCommunicator::name() const {
  return state_->name;
}

std::shared_ptr<Work> NcclCommunicator::all_reduce_async(void* data, std::size_t count, DType dtype,
                                                         ReduceOp reduce, const OpOptions& options,
                                                         std::shared_ptr<void> keep_alive) {
  State& s = *state_;
  if (data == nullptr && count > 0) {
    SLIMTRAIN_THROW(ConfigError, s.name, " all_reduce: null buffer for ", count, " elements");
  }
  if (reduce == ReduceOp::avg && !is_floating(dtype)) {
    SLIMTRAIN_THROW(ConfigError, s.name, " all_reduce: avg needs a floating type, got ",
                    to_string(dtype));
  }
  const std::size_t element = dtype_size(dtype);
  const std::size_t bytes = count * element;
  s.bytes_reduced += bytes;
  auto op = s.launch("all_reduce", bytes, to_string(dtype), options, std::move(keep_alive),
                     [&](Clock::time_point deadline) {
                       for (const Piece& p : plan_pieces(count, element, s.config.chunk_bytes,
                                                         s.config.max_elements_per_call)) {
                         void* ptr = static_cast<char*>(data) + p.offset * element;
                         SLIMTRAIN_CHECK_NCCL(ncclAllReduce(ptr, ptr, p.count, nccl_type(dtype),
                                                            nccl_op(reduce), s.comm, s.stream));
                         s.settle(deadline, "ncclAllReduce");
                       }
                     });
  return std::make_shared<NcclWork>(state_, op);
}

std::shared_ptr<Work> NcclCommunicator::broadcast_async(void* data, std::size_t count, DType dtype,
                                                        int root, const OpOptions& options,
                                                        std::shared_ptr<void> keep_alive) {
  State& s = *state_;
  if (data == nullptr && count > 0) {
    SLIMTRAIN_THROW(ConfigError, s.name, " broadcast: null buffer for ", count, " elements");
  }
  if (root < 0 || root >= s.size) {
    SLIMTRAIN_THROW(ConfigError, s.name, " broadcast: root ", root, " is not a rank (size ", s.size,
                    ")");
  }
  const std::size_t element = dtype_size(dtype);
  const std::size_t bytes = count * element;
  s.bytes_reduced += bytes;
  auto op = s.launch("broadcast", bytes, to_string(dtype), options, std::move(keep_alive),
                     [&](Clock::time_point deadline) {
                       for (const Piece& p : plan_pieces(count, element, s.config.chunk_bytes,
                                                         s.config.max_elements_per_call)) {
                         void* ptr = static_cast<char*>(data) + p.offset * element;
                         SLIMTRAIN_CHECK_NCCL(ncclBroadcast(ptr, ptr, p.count, nccl_type(dtype),
                                                            root, s.comm, s.stream));
                         s.settle(deadline, "ncclBroadcast");
                       }
                     });
  return std::make_shared<NcclWork>(state_, op);
}

void NcclCommunicator::barrier(const OpOptions& options) {
  State& s = *state_;
  auto op = s.launch("barrier", 0, "-", options, nullptr, [&](Clock::time_point deadline) {
    SLIMTRAIN_CHECK_NCCL(
        ncclAllReduce(s.device_word, s.device_word, 1, ncclInt32, ncclSum, s.comm, s.stream));
    s.settle(deadline, "ncclAllReduce (barrier)");
  });
  NcclWork(state_, op).wait();
}

bool NcclCommunicator::agree(bool mine, const OpOptions& options) {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);  // host_word is shared by agree calls
  *s.host_word = mine ? 1 : 0;
  auto op = s.launch("agree", sizeof(int), "-", options, nullptr, [&](Clock::time_point deadline) {
    SLIMTRAIN_CHECK_CUDA(
        cudaMemcpyAsync(s.device_word, s.host_word, sizeof(int), cudaMemcpyHostToDevice, s.stream));
    SLIMTRAIN_CHECK_NCCL(
        ncclAllReduce(s.device_word, s.device_word, 1, ncclInt32, ncclMin, s.comm, s.stream));
    s.settle(deadline, "ncclAllReduce (agree)");
    SLIMTRAIN_CHECK_CUDA(
        cudaMemcpyAsync(s.host_word, s.device_word, sizeof(int), cudaMemcpyDeviceToHost, s.stream));
  });
  NcclWork(state_, op).wait();
  return *s.host_word != 0;
}

std::uint64_t NcclCommunicator::bytes_reduced() const {
  return state_->bytes_reduced.load();
}

void NcclCommunicator::dump_flight_recorder() const {
  for (const std::string& line : state_->recorder.format(state_->name)) log::warn(line);
}

std::unique_ptr<Communicator> make_nccl_communicator(const runtime::Runtime& runtime,
                                                     std::string name, const CommConfig& config) {
  return std::make_unique<NcclCommunicator>(runtime, std::move(name), config);
}

}  // namespace slimtrain::comm
