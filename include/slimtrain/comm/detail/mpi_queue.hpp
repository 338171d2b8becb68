#pragma once
/**
 * @brief Inside the MPI backend (mpi_communicator.hpp): the queue of operations and the one
 * communication thread that runs them in enqueue order, and the Work handle a caller waits on
 * under the operation's deadline. Only src/comm/mpi_*.cpp include this.
 */
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/mpi_communicator.hpp"
#include "slimtrain/comm/mpi_ops.hpp"
#include "slimtrain/comm/stall_inspector.hpp"

namespace slimtrain::comm::impl {

using Clock = std::chrono::steady_clock;

/** @brief One queued operation; it owns what a caller that timed out would leave dangling. */
struct MpiOp {
  std::uint64_t seq = 0;
  OpKind kind = OpKind::barrier;
  void* data = nullptr;
  const void* in = nullptr;  // reduce_scatter and the buffer all_gather: the input blocks
  std::size_t count = 0;
  DType dtype = DType::f32;
  ReduceOp reduce = ReduceOp::sum;
  int root = 0;
  int flag = 0;                     // agree's vote
  std::vector<std::int64_t> owned;  // fields and all_gather: the record
  std::string tag;
  std::shared_ptr<void> keep_alive;
  std::size_t bytes = 0;
  double timeout_s = 0;
  Clock::time_point deadline;
  bool finished = false;
  std::exception_ptr error;
};

}  // namespace slimtrain::comm::impl

namespace slimtrain::comm {

struct MpiCommunicator::State {
  std::string name;
  int rank = 0;
  int size = 1;
  CommConfig config;
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<MpiOps> ops;
  FlightRecorder recorder;
  std::shared_ptr<Progress> progress = std::make_shared<Progress>();
  std::shared_ptr<StallInspector> inspector;
  std::uint32_t id = 0;

  std::mutex mutex;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::deque<std::shared_ptr<impl::MpiOp>> queue;
  bool stop = false;
  std::uint64_t next_seq = 0;
  std::atomic<std::uint64_t> bytes_reduced{0};
  std::thread worker;
  std::vector<char> ring_scratch;  // a reduce-scatter ring's second buffer (the thread's own)

  explicit State(const CommConfig& c) : config(c), recorder(c.recorder_entries) {}

  /** @brief The communication thread's loop: runs queued operations until stop. */
  void run();
  /** @brief One operation, with the blocking MPI calls (all-reduces in pieces). */
  void execute(impl::MpiOp& op);
  /** @brief reduce_scatter and the buffer all_gather, in pieces of each rank's block. */
  void execute_blocks(impl::MpiOp& op);
  void dump() const { report_flight_recorder(recorder, name); }
};

}  // namespace slimtrain::comm

namespace slimtrain::comm::impl {

/** @brief The caller's handle: waits on the thread until the operation's deadline. */
class MpiWork final : public Work {
 public:
  MpiWork(std::shared_ptr<MpiCommunicator::State> state, std::shared_ptr<MpiOp> op)
      : state_(std::move(state)), op_(std::move(op)) {}
  void wait() override;
  const MpiOp& op() const { return *op_; }

 private:
  std::shared_ptr<MpiCommunicator::State> state_;
  std::shared_ptr<MpiOp> op_;
  std::exception_ptr timeout_;
};

/** @brief Numbers, records and queues `op` under `options`' deadline (or the size-scaled one). */
std::shared_ptr<MpiWork> enqueue(const std::shared_ptr<MpiCommunicator::State>& state,
                                 std::shared_ptr<MpiOp> op, const OpOptions& options);

}  // namespace slimtrain::comm::impl
