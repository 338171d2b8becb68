#pragma once
/**
 * @brief Inside the NCCL data plane (nccl_data_plane.hpp): the operations in flight on the
 * communicator's stream, the abort path, and the Work handle a caller waits on. Only
 * src/comm/nccl_*.cpp include this; compiled only with SLIMTRAIN_HAVE_NCCL.
 *
 * Two locks, two threads. Callers (the main thread, an autograd hook) take the communicator's
 * `mutex` around every NCCL call, so one thread at a time issues them. The watchdog
 * (comm/op_watch.hpp, as c10d's) has a lock of its own and its own handles on the operations:
 * a caller blocked inside a launch or a wait cannot hide a hang from it. It polls each
 * operation's end event in issue order (on the communicator's GPU: it sets its device first),
 * holds the deadlines and NCCL's asynchronous errors; a late operation is reported
 * (missed_deadline: the ranks that have not arrived, the flight recorder), kept as the
 * communicator's failure, and the communicator aborted beside it, under the caller's lock when
 * that comes free within kAbortLockWait, else without it (the caller is stuck in NCCL, which is
 * what the abort is for); an abort that does not return within its limit ends the job. The
 * caller's next launch, wait or settle throws the failure; a caller that does not come back
 * within the grace period has the job ended for it.
 *
 * Waiting never blocks the caller on the device: wait() makes the caller's stream wait for the
 * operation's end event (c10d's WorkNCCL::wait does the same), so a training step queues its
 * work and runs ahead. settle() is the one host wait: before a checkpoint or an evaluation reads
 * the weights, every operation issued has ended or the failure is thrown.
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
#include "slimtrain/comm/op_watch.hpp"
#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::comm::impl {

using Clock = std::chrono::steady_clock;
inline constexpr auto kNcclPollSleep = std::chrono::microseconds(50);
/** @brief How often the watchdog looks at the operations in flight. */
inline constexpr auto kWatchdogPeriod = std::chrono::milliseconds(2);
/** @brief Seconds past the deadline's grace a caller has to come back to a failed communicator. */
inline constexpr double kCallerGraceS = 10;
/** @brief Seconds ncclCommAbort may take before the watchdog ends the job without it. */
inline constexpr double kAbortLimitS = 10;
/** @brief How long the watchdog's abort waits for a caller to leave NCCL before going ahead. */
inline constexpr auto kAbortLockWait = std::chrono::milliseconds(200);

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

/** @brief An operation's end as the watchdog sees it: an event on the communicator's stream. */
class EventEnd final : public OpEnd {
 public:
  cudaEvent_t get() const { return event_.get(); }
  /** @brief cudaEventQuery: done, not yet, or a device error (CommError). */
  bool reached() override;

 private:
  Event event_;
};

struct NcclOp {
  std::shared_ptr<WatchedOp> watched;  // its summary and deadline; the watchdog's handle
  Event ready;                         // on the compute stream: the inputs are written
  std::shared_ptr<EventEnd> done = std::make_shared<EventEnd>();  // recorded once enqueued
  std::shared_ptr<void> keep_alive;
  bool enqueued = false;  // NCCL has put the group's kernels on its stream
};

/** @brief A communicator's state; every method expects `mutex` held by the caller, except the
 * watchdog's hooks (watch_hooks), which take nothing of it but the abort's bounded try. */
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

  std::timed_mutex mutex;  // the callers' lock: NCCL calls one thread at a time
  std::atomic<bool> aborted{false};
  std::string abort_reason;  // a caller's abort (before the watchdog runs, or after it stopped)
  std::uint64_t next_seq = 0;
  std::atomic<std::uint64_t> bytes_reduced{0};
  std::deque<std::shared_ptr<NcclOp>> outstanding;  // issue order
  // A group whose ncclGroupEnd answered ncclInProgress: NCCL enqueues it in the background (it
  // may wait for peers to connect on first use). Nothing waits for it until the next launch or a
  // wait(), so the step's control decision, which catches a desync, still runs meanwhile.
  std::shared_ptr<NcclOp> pending;
  // The watchdog (op_watch.hpp): started once the communicator exists, stopped first at its end.
  std::unique_ptr<OpWatch> watch;

  explicit NcclState(const CommConfig& c) : config(c), recorder(c.recorder_entries) {}
  /** @brief The watchdog's hooks over this state; `end_job` ends the process. */
  WatchHooks watch_hooks(std::function<void(const std::string&)> end_job);

  /** @brief Non-blocking communicators may answer ncclInProgress: no new call until settled. */
  void settle(Clock::time_point deadline, const char* what);
  /** @brief A caller's ncclCommAbort while no watchdog runs; later calls throw naming `reason`. */
  void abort(const std::string& reason);
  /** @brief A failure a caller found: the watchdog aborts (or, when none runs, abort()). */
  void fail(std::exception_ptr error, const std::string& reason);
  /** @brief One look at a pending group: true once NCCL has enqueued it. */
  bool try_enqueued(NcclOp& op);
  /** @brief Until the pending group is enqueued, or the watchdog's failure (its deadline). */
  void finish_enqueue(NcclOp& op);
  /** @brief Releases finished operations in order; the front is the one running now. */
  void reap();
  /** @brief One operation: its pieces in one NCCL group on the communicator's stream. */
  std::shared_ptr<NcclOp> launch(OpKind kind, std::size_t bytes, DType dtype,
                                 const OpOptions& options, std::shared_ptr<void> keep_alive,
                                 const std::function<void()>& enqueue_pieces);
  /** @brief Throws what the watchdog found (once it has found something), or for an abort. */
  void throw_if_failed();
  /** @brief True once every operation issued has ended; throws the failure. Never blocks. */
  bool settled();

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
  bool ordered_ = false;
};

}  // namespace slimtrain::comm::impl
