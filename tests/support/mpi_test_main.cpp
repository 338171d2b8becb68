// main() for the mpi test tier: MPI with full thread support, gtest output from rank 0 only
// (other ranks print just their failures, rank-prefixed), a per-test watchdog that names a hung
// test and aborts the job instead of stalling CI, and one verdict agreed over all ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  Watchdog(int rank, double limit_s) : rank_(rank), limit_(limit_s) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Watchdog() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::string(info.test_suite_name()) + "." + info.name();
    started_ = std::chrono::steady_clock::now();
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard<std::mutex> lock(mutex_);
    current_.clear();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      if (current_.empty()) continue;
      const double ran =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      if (ran > limit_) {
        std::fprintf(stderr,
                     "[watchdog] rank %d: test %s still running after %.0f s (limit %.0f s, "
                     "SLIMTRAIN_TEST_CASE_TIMEOUT); failing the job\n",
                     rank_, current_.c_str(), ran, limit_);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
        std::_Exit(3);
      }
    }
  }

  int rank_;
  double limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string current_;
  std::chrono::steady_clock::time_point started_;
  bool stop_ = false;
  std::thread thread_;
};

std::vector<std::function<void()>>& cleanups() {
  static std::vector<std::function<void()>> list;
  return list;
}

}  // namespace

namespace slimtrain_test {
void before_finalize(std::function<void()> cleanup) {
  cleanups().push_back(std::move(cleanup));
}
}  // namespace slimtrain_test

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  slimtrain::set_process_rank(rank);
  ::testing::InitGoogleTest(&argc, argv);

  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const char* limit_env = std::getenv("SLIMTRAIN_TEST_CASE_TIMEOUT");
  const double limit = limit_env ? std::atof(limit_env) : 60.0;
  auto* watchdog = new Watchdog(rank, limit > 0 ? limit : 60.0);
  listeners.Append(watchdog);

  int local = RUN_ALL_TESTS();
  delete listeners.Release(watchdog);
  // A failure on any rank fails the test on every rank, so mpiexec's exit code is honest.
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (auto it = cleanups().rbegin(); it != cleanups().rend(); ++it) (*it)();
  MPI_Finalize();
  return global;
}
