#include "slimtrain/runtime/watchdog.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/core/thread_name.hpp"
#include "slimtrain/runtime/job_exit.hpp"

namespace slimtrain::runtime {

Watchdog::Watchdog(double seconds, std::string phase) {
  thread_ = std::thread([this, seconds, phase = std::move(phase)] {
    name_this_thread("watchdog");
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; }))
      return;
    log::error(phase, " did not finish within ", seconds,
               " s (a rank failed or stalled inside it); ending the job");
    abort_job(kExitFailure, phase + " did not finish within " + std::to_string(seconds) + " s");
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_cv_.notify_all();
  thread_.join();
}

}  // namespace slimtrain::runtime
