#include "slimtrain/comm/nccl_data_plane.hpp"

#include <algorithm>
#include <functional>
#include <thread>
#include <utility>

#include "slimtrain/comm/chunking.hpp"
#include "slimtrain/comm/detail/nccl_queue.hpp"
#include "slimtrain/core/check_gpu.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/runtime/job_exit.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::comm {
namespace {
using namespace impl;

class NcclDataPlane final : public DataPlane {
 public:
  NcclDataPlane(const runtime::Runtime& runtime, const torch::Device& device, std::string name,
                const CommConfig& config)
      : DataPlane(device), state_(std::make_shared<NcclState>(config)) {
    NcclState& s = *state_;
    s.name = std::move(name);
    s.config.deadline.deadline_for(0);  // validates the policy up front
    s.device = device.index();
    int current = -1;
    SLIMTRAIN_CHECK_CUDA(cudaGetDevice(&current));
    if (current != s.device)
      SLIMTRAIN_THROW(ConfigError, s.name, ": data plane for cuda:", s.device,
                      " but the current CUDA device is ", current, " (train::bind_device)");
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
    {
      std::lock_guard<std::timed_mutex> lock(s.mutex);
      s.settle(after(s.config.deadline.base_s), "ncclCommInitRankConfig");
    }
    // Every rank has its communicator before any rank issues a collective on it.
    bootstrap.barrier();
    WatchTimes times;
    times.period = kWatchdogPeriod;
    times.abort_limit_s = kAbortLimitS;
    times.caller_grace_s = s.config.deadline.grace_s + kCallerGraceS;
    s.watch = std::make_unique<OpWatch>(s.name, s.watch_hooks([](const std::string& why) {
      runtime::abort_job(kExitFailure, why);
    }),
                                        times);
    s.watch->start();
  }

  ~NcclDataPlane() override {
    NcclState& s = *state_;
    // The watchdog first (bounded: its abort returned or ended the job); from here on this
    // thread polls and aborts alone.
    if (s.watch) s.watch->stop();
    std::lock_guard<std::timed_mutex> lock(s.mutex);
    if (s.comm != nullptr && !s.aborted) {
      // While an exception unwinds (this rank failed), peers may never join: grace only.
      Clock::time_point limit = after(s.config.deadline.grace_s);
      if (std::uncaught_exceptions() == 0)
        for (const auto& op : s.outstanding) limit = std::max(limit, op->watched->deadline);
      while (true) {
        try {
          s.reap();
        } catch (const Error& e) {
          log::error(e.what());
          break;
        }
        if (s.aborted || s.outstanding.empty() || Clock::now() > limit) break;
        std::this_thread::sleep_for(kNcclPollSleep);
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
    std::lock_guard<std::timed_mutex> lock(state_->mutex);
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
    return start(OpKind::all_reduce, t, dtype, options, [&](void* ptr, std::size_t count) {
      return ncclAllReduce(ptr, ptr, count, nccl_type(dtype), nccl_op(op), state_->comm,
                           state_->stream);
    });
  }

  std::shared_ptr<Work> start_broadcast(const torch::Tensor& t, DType dtype, int root,
                                        const OpOptions& options) override {
    return start(OpKind::broadcast, t, dtype, options, [&](void* ptr, std::size_t count) {
      return ncclBroadcast(ptr, ptr, count, nccl_type(dtype), root, state_->comm, state_->stream);
    });
  }

  // NCCL pipelines a block operation itself: one call, no pieces (the MPI plane's pieces bound
  // the blocking calls of its one communication thread, which NCCL does not have).
  std::shared_ptr<Work> start_reduce_scatter(const torch::Tensor& input,
                                             const torch::Tensor& output, DType dtype, ReduceOp op,
                                             const OpOptions& options) override {
    const auto count = static_cast<std::size_t>(output.numel());
    return start_blocks(OpKind::reduce_scatter, input, output, dtype, options, [&] {
      return ncclReduceScatter(input.data_ptr(), output.data_ptr(), count, nccl_type(dtype),
                               nccl_op(op), state_->comm, state_->stream);
    });
  }

  std::shared_ptr<Work> start_all_gather(const torch::Tensor& input, const torch::Tensor& output,
                                         DType dtype, const OpOptions& options) override {
    const auto count = static_cast<std::size_t>(input.numel());
    return start_blocks(OpKind::all_gather, input, output, dtype, options, [&] {
      return ncclAllGather(input.data_ptr(), output.data_ptr(), count, nccl_type(dtype),
                           state_->comm, state_->stream);
    });
  }

  void throw_if_backend_failed() const override {
    std::lock_guard<std::timed_mutex> lock(state_->mutex);
    state_->throw_if_failed();
  }

  // The host's wait for the device: until every operation's end event, the watchdog holding
  // their deadlines (its failure is thrown here); polled without holding the callers' lock.
  void settle_issued() override {
    NcclState& s = *state_;
    for (;;) {
      {
        std::lock_guard<std::timed_mutex> lock(s.mutex);
        if (s.settled()) return;
      }
      std::this_thread::sleep_for(kNcclPollSleep);
    }
  }

 private:
  std::shared_ptr<Work> start_blocks(OpKind kind, const torch::Tensor& input,
                                     const torch::Tensor& output, DType dtype,
                                     const OpOptions& options,
                                     const std::function<ncclResult_t()>& call) {
    NcclState& s = *state_;
    const std::size_t bytes =
        static_cast<std::size_t>(std::max(input.numel(), output.numel())) * dtype_size(dtype);
    s.bytes_reduced += bytes;
    std::lock_guard<std::timed_mutex> lock(s.mutex);
    auto launched =
        s.launch(kind, bytes, dtype, options,
                 std::make_shared<std::pair<torch::Tensor, torch::Tensor>>(input, output),
                 [&] { SLIMTRAIN_CHECK_NCCL(call()); });
    return std::make_shared<NcclWork>(state_, launched);
  }

  // One operation over `t` in pieces of at most chunk_bytes, `piece` enqueuing each in place.
  std::shared_ptr<Work> start(OpKind kind, const torch::Tensor& t, DType dtype,
                              const OpOptions& options,
                              const std::function<ncclResult_t(void*, std::size_t)>& piece) {
    NcclState& s = *state_;
    const std::size_t count = static_cast<std::size_t>(t.numel());
    const std::size_t element = dtype_size(dtype);
    char* data = static_cast<char*>(t.data_ptr());
    s.bytes_reduced += count * element;
    std::lock_guard<std::timed_mutex> lock(s.mutex);
    auto launched =
        s.launch(kind, count * element, dtype, options, std::make_shared<torch::Tensor>(t), [&] {
          for (const Piece& p :
               plan_pieces(count, element, s.config.chunk_bytes, s.config.max_elements_per_call))
            SLIMTRAIN_CHECK_NCCL(piece(data + p.offset * element, p.count));
        });
    return std::make_shared<NcclWork>(state_, launched);
  }

  std::shared_ptr<NcclState> state_;
};

}  // namespace

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
