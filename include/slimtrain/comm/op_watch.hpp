#pragma once
/**
 * @brief A watchdog thread over a backend's operations in flight, as c10d's NCCL watchdog: it
 * looks at each operation's end in issue order, holds their deadlines and the backend's
 * asynchronous errors, and aborts the backend when one fails.
 *
 * It has its own lock and its own view of the operations (shared handles the backend hands it at
 * launch), so a caller blocked inside a launch or a wait, holding the backend's lock, cannot hide
 * a hang from it. What it does on a failure is bounded too: the missed deadline's report (the
 * peers' answers within their grace), then the abort, run beside it for at most abort_limit_s
 * (an abort that does not return ends the job with the report); and a caller that does not come
 * back to the backend within caller_grace_s of the failure has the job ended for it.
 *
 * The NCCL data plane watches CUDA events with it (detail/nccl_queue.hpp); tests watch fakes.
 */
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "slimtrain/comm/stall_report.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {

/** @brief How an operation's end is seen: a CUDA event on the communicator's stream, a fake. */
class OpEnd {
 public:
  virtual ~OpEnd() = default;
  /** @brief True once the operation's results are written; throws CommError on a device error. */
  virtual bool reached() = 0;
};

/** @brief One operation under watch, shared by the backend (its caller) and the watchdog. */
struct WatchedOp {
  using Clock = std::chrono::steady_clock;
  OpSummary summary;
  double timeout_s = 0;
  Clock::time_point deadline;
  std::atomic<bool> finished{false};

 private:
  friend class OpWatch;
  std::shared_ptr<OpEnd> end_;  // under OpWatch's lock: set once the backend has enqueued it
};

/** @brief What the watchdog calls; every hook but `abort` must return promptly. */
struct WatchHooks {
  /** @brief First thing in the thread (the NCCL plane: cudaSetDevice to the communicator's GPU). */
  std::function<void()> thread_start;
  /** @brief The backend's asynchronous error, "" when none (ncclCommGetAsyncError). */
  std::function<std::string()> async_error;
  /** @brief The missed deadline's report and error (missed_deadline.hpp; bounded by its grace). */
  std::function<TimeoutError(const WatchedOp&)> missed;
  /** @brief An operation seen finished, once, on any thread: progress and recorder notes. */
  std::function<void(const WatchedOp&)> finished;
  /** @brief The backend's abort (ncclCommAbort); may block: it runs on a thread of its own. */
  std::function<void(const std::string& reason)> abort;
  /** @brief Ends the process (runtime::abort_job); in tests, a fake that records the call. */
  std::function<void(const std::string& why)> end_job;
};

struct WatchTimes {
  std::chrono::milliseconds period{2};
  /** @brief How long the abort may take before the job is ended without it. */
  double abort_limit_s = 10;
  /** @brief After a failure, how long the caller has to come back and be told. */
  double caller_grace_s = 10;
};

class OpWatch {
 public:
  OpWatch(std::string name, WatchHooks hooks, WatchTimes times);
  /** @brief stop() */
  ~OpWatch();
  OpWatch(const OpWatch&) = delete;
  OpWatch& operator=(const OpWatch&) = delete;

  /** @brief Starts the watchdog thread. */
  void start();
  /** @brief Stops and joins it: bounded (each look is, and the abort beside it is not joined). */
  void stop();

  /** @brief At launch, in issue order. */
  void add(std::shared_ptr<WatchedOp> op);
  /** @brief Once the backend has enqueued `op`: how its end is seen from now on. */
  void set_end(WatchedOp& op, std::shared_ptr<OpEnd> end);
  /** @brief The caller's own look at `op`: true once it has finished (noted finished then). */
  bool poll(WatchedOp& op);

  /**
   * @brief A failure the caller found (an enqueue error, say): kept, and the backend aborted
   * (by the watchdog thread when it runs, else here). The first failure is the one kept.
   */
  void fail(std::exception_ptr error);
  /** @brief Throws the failure kept, once there is one; the caller has then been told. */
  void throw_if_failed();
  bool failed() const;
  /** @brief Whether the abort has started: the backend must make no further call. */
  bool aborted() const { return aborted_.load(); }

  /** @brief One look, as the thread takes it every period (tests drive it directly). */
  void look();

 private:
  void loop();
  /** @brief The abort on a thread beside this one, waited for at most abort_limit_s. */
  void abort_bounded(const std::string& reason);
  void note_finished(WatchedOp& op);
  std::string failure_text() const;

  std::string name_;
  WatchHooks hooks_;
  WatchTimes times_;

  mutable std::mutex mutex_;  // the operations and the failure: never held across a hook
  std::deque<std::shared_ptr<WatchedOp>> ops_;
  std::exception_ptr failure_;
  std::chrono::steady_clock::time_point failed_at_;
  bool delivered_ = false;
  bool ended_ = false;
  std::atomic<bool> aborted_{false};

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace slimtrain::comm
