// comm::OpWatch, the NCCL data plane's watchdog (comm/op_watch.hpp), on fakes: an operation whose
// end never comes while the caller's lock is held (a launch blocked in the driver), an abort that
// never returns, a caller that never comes back, and the order in which it looks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "slimtrain/comm/op_watch.hpp"

namespace slimtrain::comm {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// An end that comes when the test says so.
class FakeEnd final : public OpEnd {
 public:
  bool reached() override { return done.load(); }
  std::atomic<bool> done{false};
};

// What the hooks saw, shared with the watchdog's threads (a detached abort may outlive a test).
struct Seen {
  std::timed_mutex caller;  // the backend's lock, as the NCCL plane's
  std::mutex mutex;
  std::condition_variable changed;
  std::atomic<int> missed{0}, aborts{0}, aborts_locked{0}, finished{0}, ended{0};
  std::atomic<bool> abort_hangs{false}, release_abort{false};
  std::string end_reason;
  void note() { changed.notify_all(); }
  template <class Pred>
  bool wait_for(std::chrono::milliseconds limit, Pred pred) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, limit, pred);
  }
};

WatchHooks hooks(const std::shared_ptr<Seen>& seen) {
  WatchHooks h;
  h.async_error = [] { return std::string(); };
  h.missed = [seen](const WatchedOp& op) {
    ++seen->missed;
    return TimeoutError("missed seq " + std::to_string(op.summary.seq), {1}, __FILE__, __LINE__);
  };
  h.finished = [seen](const WatchedOp&) {
    ++seen->finished;
    seen->note();
  };
  h.abort = [seen](const std::string&) {
    std::unique_lock<std::timed_mutex> lock(seen->caller, std::defer_lock);
    if (lock.try_lock_for(50ms)) ++seen->aborts_locked;
    ++seen->aborts;
    seen->note();
    while (seen->abort_hangs.load() && !seen->release_abort.load())
      std::this_thread::sleep_for(5ms);
  };
  h.end_job = [seen](const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(seen->mutex);
      seen->end_reason = why;
    }
    ++seen->ended;
    seen->note();
  };
  return h;
}

WatchTimes quick() {
  WatchTimes t;
  t.period = 1ms;
  t.abort_limit_s = 0.3;
  t.caller_grace_s = 0.5;
  return t;
}

std::shared_ptr<WatchedOp> op(std::uint64_t seq, double timeout_s) {
  auto w = std::make_shared<WatchedOp>();
  w->summary.seq = seq;
  w->summary.kind = OpKind::all_reduce;
  w->timeout_s = timeout_s;
  w->deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(timeout_s));
  return w;
}

TEST(OpWatch, FiresWhileTheCallersLockIsHeld) {
  auto seen = std::make_shared<Seen>();
  OpWatch watch("data", hooks(seen), quick());
  watch.start();
  // A launch that never returns from the driver: the caller's lock is held throughout and the
  // operation's end never comes.
  std::unique_lock<std::timed_mutex> launch(seen->caller);
  auto w = op(1, 0.05);
  watch.add(w);
  watch.set_end(*w, std::make_shared<FakeEnd>());
  const auto t0 = Clock::now();
  ASSERT_TRUE(seen->wait_for(2000ms, [&] { return seen->aborts.load() > 0; }))
      << "the watchdog never aborted while the caller held its lock";
  EXPECT_LT(Clock::now() - t0, 1s);
  EXPECT_EQ(seen->missed.load(), 1);
  EXPECT_EQ(seen->aborts_locked.load(), 0) << "the abort went ahead without the caller's lock";
  EXPECT_TRUE(watch.failed());
  EXPECT_TRUE(watch.aborted());
  launch.unlock();
  // The caller comes back and is told.
  EXPECT_THROW(watch.throw_if_failed(), TimeoutError);
  watch.stop();
  EXPECT_EQ(seen->ended.load(), 0) << "the caller came back within its grace";
}

TEST(OpWatch, AbortsUnderTheCallersLockWhenItIsFree) {
  auto seen = std::make_shared<Seen>();
  OpWatch watch("data", hooks(seen), quick());
  watch.start();
  auto w = op(1, 0.02);
  watch.add(w);  // never enqueued: no end at all, the deadline still holds
  ASSERT_TRUE(seen->wait_for(2000ms, [&] { return seen->aborts.load() > 0; }));
  EXPECT_EQ(seen->aborts_locked.load(), 1);
  EXPECT_THROW(watch.throw_if_failed(), TimeoutError);
}

TEST(OpWatch, AnAbortThatHangsEndsTheJob) {
  auto seen = std::make_shared<Seen>();
  seen->abort_hangs = true;
  OpWatch watch("data", hooks(seen), quick());
  watch.start();
  auto w = op(7, 0.02);
  watch.add(w);
  watch.set_end(*w, std::make_shared<FakeEnd>());
  const auto t0 = Clock::now();
  ASSERT_TRUE(seen->wait_for(3000ms, [&] { return seen->ended.load() > 0; }))
      << "an abort stuck in the driver left the job running";
  EXPECT_LT(Clock::now() - t0, 2s);
  {
    std::lock_guard<std::mutex> lock(seen->mutex);
    EXPECT_NE(seen->end_reason.find("missed seq 7"), std::string::npos) << seen->end_reason;
    EXPECT_NE(seen->end_reason.find("abort did not return"), std::string::npos) << seen->end_reason;
  }
  seen->release_abort = true;  // the detached abort thread may now return
  watch.stop();
  EXPECT_EQ(seen->ended.load(), 1) << "the job is ended once";
}

TEST(OpWatch, ACallerThatNeverComesBackHasTheJobEnded) {
  auto seen = std::make_shared<Seen>();
  OpWatch watch("data", hooks(seen), quick());
  watch.start();
  watch.add(op(1, 0.01));
  ASSERT_TRUE(seen->wait_for(3000ms, [&] { return seen->ended.load() > 0; }));
  std::lock_guard<std::mutex> lock(seen->mutex);
  EXPECT_NE(seen->end_reason.find("did not come back"), std::string::npos) << seen->end_reason;
}

TEST(OpWatch, FinishedOperationsInIssueOrderAndNoFalseAlarm) {
  auto seen = std::make_shared<Seen>();
  OpWatch watch("data", hooks(seen), quick());
  auto a = op(1, 0.2), b = op(2, 0.2);
  auto end_a = std::make_shared<FakeEnd>(), end_b = std::make_shared<FakeEnd>();
  watch.add(a);
  watch.add(b);
  watch.set_end(*a, end_a);
  watch.set_end(*b, end_b);
  watch.look();
  EXPECT_FALSE(watch.poll(*a));
  end_a->done = true;
  watch.look();  // driven by hand: no thread
  EXPECT_TRUE(a->finished.load());
  EXPECT_FALSE(b->finished.load());
  EXPECT_EQ(seen->finished.load(), 1);
  end_b->done = true;
  EXPECT_TRUE(watch.poll(*b));  // the caller's own look notes it, once
  watch.look();
  EXPECT_EQ(seen->finished.load(), 2);
  std::this_thread::sleep_for(250ms);  // past both deadlines, both finished: nothing is late
  watch.look();
  EXPECT_FALSE(watch.failed());
  EXPECT_EQ(seen->missed.load(), 0);
  EXPECT_NO_THROW(watch.throw_if_failed());
}

TEST(OpWatch, TheBackendsAsynchronousErrorFailsIt) {
  auto seen = std::make_shared<Seen>();
  WatchHooks h = hooks(seen);
  h.async_error = [] { return std::string("unhandled system error"); };
  OpWatch watch("data", h, quick());
  watch.look();
  EXPECT_TRUE(watch.failed());
  EXPECT_EQ(seen->aborts.load(), 1);
  try {
    watch.throw_if_failed();
    FAIL() << "no failure thrown";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("unhandled system error"), std::string::npos);
  }
}

TEST(OpWatch, ACallersFailureIsAbortedByTheWatchdog) {
  auto seen = std::make_shared<Seen>();
  OpWatch watch("data", hooks(seen), quick());
  watch.start();
  watch.fail(std::make_exception_ptr(CommError("ncclGroupEnd failed", __FILE__, __LINE__)));
  ASSERT_TRUE(seen->wait_for(2000ms, [&] { return seen->aborts.load() > 0; }));
  EXPECT_THROW(watch.throw_if_failed(), CommError);
}

}  // namespace
}  // namespace slimtrain::comm
