#include "slimtrain/comm/op_watch.hpp"

#include <future>
#include <vector>

#include "slimtrain/core/detail/concat.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/core/thread_name.hpp"

namespace slimtrain::comm {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

OpWatch::OpWatch(std::string name, WatchHooks hooks, WatchTimes times)
    : name_(std::move(name)), hooks_(std::move(hooks)), times_(times) {}

OpWatch::~OpWatch() {
  stop();
}

void OpWatch::start() {
  thread_ = std::thread([this] { loop(); });
}

void OpWatch::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void OpWatch::loop() {
  name_this_thread("op-watch");
  if (hooks_.thread_start) hooks_.thread_start();
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stopping_) {
    lock.unlock();
    look();
    lock.lock();
    stop_cv_.wait_for(lock, times_.period, [this] { return stopping_; });
  }
}

void OpWatch::add(std::shared_ptr<WatchedOp> op) {
  std::lock_guard<std::mutex> lock(mutex_);
  ops_.push_back(std::move(op));
}

void OpWatch::set_end(WatchedOp& op, std::shared_ptr<OpEnd> end) {
  std::lock_guard<std::mutex> lock(mutex_);
  op.end_ = std::move(end);
}

bool OpWatch::poll(WatchedOp& op) {
  if (op.finished.load()) return true;
  std::shared_ptr<OpEnd> end;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    end = op.end_;
  }
  if (!end || !end->reached()) return false;
  note_finished(op);
  return true;
}

void OpWatch::note_finished(WatchedOp& op) {
  if (!op.finished.exchange(true) && hooks_.finished) hooks_.finished(op);
}

void OpWatch::fail(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) return;
  failure_ = std::move(error);
  failed_at_ = Clock::now();
}

bool OpWatch::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<bool>(failure_);
}

void OpWatch::throw_if_failed() {
  std::exception_ptr failure;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_) return;
    delivered_ = true;
    failure = failure_;
  }
  std::rethrow_exception(failure);
}

std::string OpWatch::failure_text() const {
  std::exception_ptr failure;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failure = failure_;
  }
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  }
  return name_ + " failed";
}

void OpWatch::look() {
  if (failed()) {
    if (!aborted_.load()) abort_bounded(failure_text());
    bool end = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!delivered_ && !ended_ && Clock::now() > failed_at_ + seconds(times_.caller_grace_s))
        end = ended_ = true;
    }
    if (end)
      hooks_.end_job(detail::concat(failure_text(), "; the training thread did not come back to ",
                                    name_, " within ", times_.caller_grace_s,
                                    " s: ending the job"));
    return;
  }
  // The operations in issue order, with how each one's end is seen, taken under the lock and
  // looked at outside it: a device query may take its time.
  std::vector<std::pair<std::shared_ptr<WatchedOp>, std::shared_ptr<OpEnd>>> ops;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!ops_.empty() && ops_.front()->finished.load()) ops_.pop_front();
    ops.reserve(ops_.size());
    for (const auto& op : ops_) ops.emplace_back(op, op->end_);
  }
  try {
    for (const auto& [op, end] : ops) {
      if (op->finished.load()) continue;
      if (end && end->reached()) {
        note_finished(*op);
        continue;
      }
      if (Clock::now() > op->deadline) throw hooks_.missed(*op);
      break;  // later operations started after this one: their deadlines come later
    }
    const std::string async = hooks_.async_error ? hooks_.async_error() : std::string();
    if (!async.empty())
      SLIMTRAIN_THROW(CommError, name_, ": the backend reported an error: ", async);
  } catch (const Error&) {
    fail(std::current_exception());
    abort_bounded(failure_text());
  }
}

void OpWatch::abort_bounded(const std::string& reason) {
  if (aborted_.exchange(true) || !hooks_.abort) return;
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> returned = done->get_future();
  // Beside this thread, so an abort stuck in the driver cannot stop the watchdog from ending
  // the job; the thread owns copies of what it uses.
  std::thread([abort = hooks_.abort, reason, done] {
    name_this_thread("op-abort");
    try {
      abort(reason);
    } catch (const std::exception& e) {
      log::error("the abort failed: ", e.what());
    }
    done->set_value();
  }).detach();
  if (returned.wait_for(seconds(times_.abort_limit_s)) == std::future_status::ready) return;
  bool end = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ended_) end = ended_ = true;
  }
  if (end)
    hooks_.end_job(detail::concat(reason, "; ", name_, "'s abort did not return within ",
                                  times_.abort_limit_s, " s: ending the job"));
}

}  // namespace slimtrain::comm
