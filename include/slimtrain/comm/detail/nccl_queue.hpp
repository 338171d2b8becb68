#pragma once
/**
 * @brief Inside the NCCL data plane (nccl_data_plane.hpp): the operations in flight on the
 * communicator's stream, the abort path, and the Work handle a caller waits on. Only
 * src/comm/nccl_*.cpp include this; compiled only with SLIMTRAIN_HAVE_NCCL.
 *
 * Locking: one mutex per communicator, taken by every entry point (launching from the main
 * thread or an autograd hook, waiting, the watchdog, destruction); every NcclState method runs
 * with it held, so one thread at a time issues NCCL calls.
 *
 * Waiting never blocks the caller on the device: wait() makes the caller's stream wait for the
 * operation's end event (c10d's WorkNCCL::wait does the same), so a training step queues its
 * work and runs ahead. Deadlines and NCCL's asynchronous errors are watched by a thread of the
 * communicator's own (watch(), as c10d's watchdog), which polls the events in issue order: a late
 * operation is reported (missed_deadline: the ranks that have not arrived, the flight recorder)
 * and the communicator aborted; the caller's next launch or wait throws that report, and a caller
 * that does not come back to the communicator within the grace period has the job ended for it.
 */
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::comm::impl {

using Clock = std::chrono::steady_clock;
inline constexpr auto kNcclPollSleep = std::chrono::microseconds(50);
/** @brief How often the watchdog looks at the operations in flight. */
inline constexpr auto kWatchdogPeriod = std::chrono::milliseconds(2);
/** @brief Seconds past the deadline's grace a caller has to come back to a failed communicator. */
inline constexpr double kCallerGraceS = 10;

inline Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

/** @brief The stream the caller's kernels run on (asked at every call: autograd hooks run on
 * the engine's device thread). */
cudaStream_t compute_stream(int device);
ncclDataType_t nccl_type(DType dtype);
ncclRedOp_t nccl_op(ReduceOp op);

class Event {
 public:
  Event();
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

/** @brief A communicator's state; every method expects `mutex` held by the caller. */
struct NcclState {
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

  std::mutex mutex;
  bool aborted = false;
  std::string abort_reason;
  std::uint64_t next_seq = 0;
  std::atomic<std::uint64_t> bytes_reduced{0};
  std::deque<std::shared_ptr<NcclOp>> outstanding;  // issue order
  // A group whose ncclGroupEnd answered ncclInProgress: NCCL enqueues it in the background (it
  // may wait for peers to connect on first use). Nothing waits for it until the next launch or a
  // wait(), so the step's control decision, which catches a desync, still runs meanwhile.
  std::shared_ptr<NcclOp> pending;
  // The watchdog: what it found (a late operation's report, an asynchronous error), thrown to the
  // caller at its next launch or wait, and when; whether a caller has been told.
  std::exception_ptr failure;
  Clock::time_point failed_at;
  bool failure_delivered = false;
  bool stopping = false;
  std::thread watchdog;

  explicit NcclState(const CommConfig& c) : config(c), recorder(c.recorder_entries) {}

  /** @brief Non-blocking communicators may answer ncclInProgress: no new call until settled. */
  void settle(Clock::time_point deadline, const char* what);
  /** @brief ncclCommAbort, once; later calls on the communicator throw naming `reason`. */
  void abort(const std::string& reason);
  /** @brief One look at a pending group: true once NCCL has enqueued it. */
  bool try_enqueued(NcclOp& op);
  /** @brief Until the pending group is enqueued, or its deadline (then report and abort). */
  void finish_enqueue(NcclOp& op);
  /** @brief Releases finished operations in order; the front is the one running now. */
  void reap();
  void finish(NcclOp& op);
  /** @brief One operation: its pieces in one NCCL group on the communicator's stream. */
  std::shared_ptr<NcclOp> launch(OpKind kind, std::size_t bytes, DType dtype,
                                 const OpOptions& options, std::shared_ptr<void> keep_alive,
                                 const std::function<void()>& enqueue_pieces);
  /** @brief The missed deadline's report (missed_deadline.hpp), then abort. */
  TimeoutError timeout(NcclOp& op);
  /** @brief Throws what the watchdog found (once it has found something), or for an abort. */
  void throw_if_failed();
  /**
   * @brief One look by the watchdog: finished operations released, the oldest unfinished one's
   * deadline and NCCL's asynchronous error checked. False once the job must end without the
   * caller (it has not come back to the communicator within the grace period of a failure).
   */
  bool watch();

 private:
  void publish_current();
};

/** @brief The caller's handle: orders its stream after the collective, polls to the deadline. */
class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<NcclState> state, std::shared_ptr<NcclOp> op)
      : state_(std::move(state)), op_(std::move(op)) {}
  void wait() override;

 private:
  std::shared_ptr<NcclState> state_;
  std::shared_ptr<NcclOp> op_;
  std::exception_ptr timeout_;
  bool ordered_ = false;
};

}  // namespace slimtrain::comm::impl
