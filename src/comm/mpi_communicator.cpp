#include "slimtrain/comm/mpi_communicator.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "slimtrain/comm/chunking.hpp"
#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/mpi_ops.hpp"
#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/core/thread_name.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::comm {
namespace {
using Clock = std::chrono::steady_clock;

struct Op {
  std::uint64_t seq = 0;
  OpKind kind = OpKind::barrier;
  void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::f32;
  ReduceOp reduce = ReduceOp::sum;
  int root = 0;
  int flag = 0;  // agree's vote, owned by the op so a timed-out caller leaves nothing dangling
  std::vector<std::int64_t> owned;  // fields and all_gather: the record, owned likewise
  std::string tag;
  std::shared_ptr<void> keep_alive;
  std::size_t bytes = 0;
  double timeout_s = 0;
  Clock::time_point deadline;
  bool finished = false;
  std::exception_ptr error;
};

class MpiWork;
}  // namespace

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
  std::deque<std::shared_ptr<Op>> queue;
  bool stop = false;
  std::uint64_t next_seq = 0;
  std::atomic<std::uint64_t> bytes_reduced{0};
  std::thread worker;

  explicit State(const CommConfig& c) : config(c), recorder(c.recorder_entries) {}

  void execute(Op& op) {
    switch (op.kind) {
      case OpKind::barrier:
        SLIMTRAIN_CHECK_MPI(MPI_Barrier(comm));
        return;
      case OpKind::agree:
        SLIMTRAIN_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &op.flag, 1, MPI_INT, MPI_LAND, comm));
        return;
      case OpKind::fields:
        SLIMTRAIN_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, op.owned.data(),
                                          static_cast<int>(op.owned.size() / 2), ops->field_type(),
                                          ops->field_op(), comm));
        return;
      case OpKind::all_gather:
        SLIMTRAIN_CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, op.owned.data(),
                                          static_cast<int>(op.count), MPI_INT64_T, comm));
        return;
      case OpKind::all_reduce:
      case OpKind::broadcast:
        break;
      case OpKind::none:
        return;
    }
    const std::size_t element = dtype_size(op.dtype);
    const MPI_Datatype type = mpi_type(op.dtype);
    const MPI_Op mop = ops->reduce_op(op.dtype, op.reduce);
    for (const Piece& piece :
         plan_pieces(op.count, element, config.chunk_bytes, config.max_elements_per_call)) {
      void* ptr = static_cast<char*>(op.data) + piece.offset * element;
      const int n = static_cast<int>(piece.count);
      if (op.kind == OpKind::broadcast) {
        SLIMTRAIN_CHECK_MPI(MPI_Bcast(ptr, n, type, op.root, comm));
        continue;
      }
      SLIMTRAIN_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, ptr, n, type, mop, comm));
      if (op.reduce != ReduceOp::avg) continue;
      // Averaging piece by piece while it is still in cache.
      scale_in_place(ptr, piece.count, op.dtype, 1.0 / size);
    }
  }

  void run() {
    for (;;) {
      std::shared_ptr<Op> op;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_cv.wait(lock, [this] { return stop || !queue.empty(); });
        if (queue.empty()) return;
        op = queue.front();
      }
      recorder.started(op->seq);
      progress->set_current(op->seq, op->kind, op->bytes, op->tag.c_str());
      try {
        execute(*op);
      } catch (...) {
        op->error = std::current_exception();
      }
      recorder.ended(op->seq, op->error ? OpStatus::failed : OpStatus::done);
      std::shared_ptr<void> release;
      {
        std::lock_guard<std::mutex> lock(mutex);
        queue.pop_front();
        op->finished = true;
        release.swap(op->keep_alive);
        progress->completed.store(op->seq);
      }
      progress->clear_current(op->seq);
      done_cv.notify_all();
      release.reset();  // may free a tensor: outside the lock
    }
  }

  void dump() const {
    report_flight_recorder(recorder, name);
  }

  TimeoutError timeout(const Op& op) {
    recorder.caller_timed_out(op.seq);
    OpSummary mine;
    mine.seq = op.seq;
    mine.kind = op.kind;
    mine.bytes = op.bytes;
    mine.tag = op.tag;
    const StallReport report = analyse_stall(mine, inspector->inquire(id, config.deadline.grace_s));
    const std::string message =
        detail::concat(name, " ", to_string(op.kind), " seq ", op.seq, " of ", op.bytes,
                       " bytes missed its deadline of ", op.timeout_s,
                       " s; missing ranks: ", report.description, inspector->inquiry_scope());
    log::error(message);
    dump();
    return TimeoutError(message, report.missing, __FILE__, __LINE__);
  }
};

namespace {
class MpiWork final : public Work {
 public:
  MpiWork(std::shared_ptr<MpiCommunicator::State> state, std::shared_ptr<Op> op)
      : state_(std::move(state)), op_(std::move(op)) {}

  void wait() override {
    {
      std::unique_lock<std::mutex> lock(state_->mutex);
      const bool done = timeout_ ? op_->finished
                                 : state_->done_cv.wait_until(lock, op_->deadline,
                                                              [this] { return op_->finished; });
      if (done) {
        if (op_->error) std::rethrow_exception(op_->error);
        return;
      }
    }
    if (!timeout_) timeout_ = std::make_exception_ptr(state_->timeout(*op_));
    std::rethrow_exception(timeout_);
  }

  const Op& op() const { return *op_; }

 private:
  std::shared_ptr<MpiCommunicator::State> state_;
  std::shared_ptr<Op> op_;
  std::exception_ptr timeout_;
};

std::shared_ptr<MpiWork> enqueue(const std::shared_ptr<MpiCommunicator::State>& state,
                                 std::shared_ptr<Op> op, const OpOptions& options) {
  auto& s = *state;
  op->tag = options.tag ? options.tag : "";
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    op->timeout_s =
        options.timeout_s >= 0 ? options.timeout_s : s.config.deadline.deadline_for(op->bytes);
    op->deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(op->timeout_s));
    if (s.stop) SLIMTRAIN_THROW(CommError, "communicator ", s.name, " is shutting down");
    op->seq = ++s.next_seq;
    s.progress->issued.store(op->seq);
    const bool typed = op->kind == OpKind::all_reduce || op->kind == OpKind::broadcast;
    s.recorder.enqueued(op->seq, to_string(op->kind), typed ? to_string(op->dtype) : "-", op->bytes,
                        op->tag);
    s.queue.push_back(op);
  }
  s.work_cv.notify_one();
  return std::make_shared<MpiWork>(state, std::move(op));
}

void check_buffer(const std::string& name, const char* what, const void* data, std::size_t count) {
  if (data == nullptr && count > 0) {
    SLIMTRAIN_THROW(ConfigError, name, " ", what, ": null buffer for ", count, " elements");
  }
}
}  // namespace

MpiCommunicator::MpiCommunicator(const runtime::Runtime& runtime, std::string name,
                                 const CommConfig& config)
    : state_(std::make_shared<State>(config)) {
  State& s = *state_;
  s.name = std::move(name);
  s.config.deadline.deadline_for(0);  // validates the policy up front
  if (s.config.max_elements_per_call == 0 || s.config.max_elements_per_call > INT_MAX) {
    SLIMTRAIN_THROW(ConfigError, "communicator ", s.name, ": max_elements_per_call must be in [1, ",
                    INT_MAX, "], got ", s.config.max_elements_per_call);
  }
  s.inspector = StallInspector::acquire(runtime);
  SLIMTRAIN_CHECK_MPI(MPI_Comm_dup(runtime.world(), &s.comm));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(s.comm, &s.rank));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(s.comm, &s.size));
  s.ops = std::make_unique<MpiOps>();
  s.id = s.inspector->add(s.progress, s.name);
  std::shared_ptr<State> keep = state_;
  s.worker = std::thread([keep] {
    name_this_thread("comm-" + keep->name);
    keep->run();
  });
}

MpiCommunicator::~MpiCommunicator() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.stop = true;
  s.work_cv.notify_all();
  // Queued operations may still finish: wait until the last deadline plus grace, no longer. While
  // an exception unwinds (this rank failed), peers may never arrive: grace only, then the job
  // ends (abort at exit) instead of holding the failing rank for a whole deadline.
  Clock::time_point limit =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(s.config.deadline.grace_s));
  const bool unwinding = std::uncaught_exceptions() > 0;
  for (const auto& op : s.queue) {
    if (unwinding) break;
    limit = std::max(limit,
                     op->deadline + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(s.config.deadline.grace_s)));
  }
  const bool drained = s.done_cv.wait_until(lock, limit, [&s] { return s.queue.empty(); });
  if (!drained) {
    const std::uint64_t stuck = s.queue.front()->seq;
    const std::size_t left = s.queue.size();
    lock.unlock();
    log::error("communicator ", s.name, ": ", left, " operation(s) never completed (oldest seq ",
               stuck,
               ": a peer never joined); leaving its thread behind and ending the job with "
               "MPI_Abort at exit instead of hanging in MPI_Finalize");
    s.dump();
    runtime::abort_at_exit("communicator " + s.name + " has operations that never completed");
    s.worker.detach();  // the thread keeps the state, its MPI communicator and buffers alive
    return;
  }
  lock.unlock();
  s.worker.join();
  s.inspector->remove(s.id);
  s.ops.reset();
  MPI_Comm_free(&s.comm);
}

int MpiCommunicator::rank() const {
  return state_->rank;
}
int MpiCommunicator::size() const {
  return state_->size;
}
const std::string& MpiCommunicator::name() const {
  return state_->name;
}

void MpiCommunicator::set_floor_bandwidth(double bytes_per_s) {
  DeadlinePolicy policy = state_->config.deadline;
  policy.floor_bytes_per_s = bytes_per_s;
  policy.deadline_for(0);  // validates
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->config.deadline = policy;
}

std::shared_ptr<Work> MpiCommunicator::all_reduce_async(void* data, std::size_t count, DType dtype,
                                                        ReduceOp reduce, const OpOptions& options,
                                                        std::shared_ptr<void> keep_alive) {
  check_buffer(state_->name, "all_reduce", data, count);
  if (reduce == ReduceOp::avg && !is_floating(dtype)) {
    SLIMTRAIN_THROW(ConfigError, state_->name, " all_reduce: avg needs a floating type, got ",
                    to_string(dtype), " (sum it and divide where the count is known)");
  }
  auto op = std::make_shared<Op>();
  op->kind = OpKind::all_reduce;
  op->data = data;
  op->count = count;
  op->dtype = dtype;
  op->reduce = reduce;
  op->keep_alive = std::move(keep_alive);
  op->bytes = count * dtype_size(dtype);
  state_->bytes_reduced += op->bytes;
  return enqueue(state_, std::move(op), options);
}

std::shared_ptr<Work> MpiCommunicator::broadcast_async(void* data, std::size_t count, DType dtype,
                                                       int root, const OpOptions& options,
                                                       std::shared_ptr<void> keep_alive) {
  check_buffer(state_->name, "broadcast", data, count);
  if (root < 0 || root >= state_->size) {
    SLIMTRAIN_THROW(ConfigError, state_->name, " broadcast: root ", root, " is not a rank (size ",
                    state_->size, ")");
  }
  auto op = std::make_shared<Op>();
  op->kind = OpKind::broadcast;
  op->data = data;
  op->count = count;
  op->dtype = dtype;
  op->root = root;
  op->keep_alive = std::move(keep_alive);
  op->bytes = count * dtype_size(dtype);
  state_->bytes_reduced += op->bytes;
  return enqueue(state_, std::move(op), options);
}

void MpiCommunicator::barrier(const OpOptions& options) {
  auto op = std::make_shared<Op>();
  op->kind = OpKind::barrier;
  enqueue(state_, std::move(op), options)->wait();
}

bool MpiCommunicator::agree(bool mine, const OpOptions& options) {
  auto op = std::make_shared<Op>();
  op->kind = OpKind::agree;
  op->flag = mine ? 1 : 0;
  op->bytes = sizeof(int);
  auto work = enqueue(state_, std::move(op), options);
  work->wait();
  return work->op().flag != 0;
}

std::vector<Field> MpiCommunicator::all_reduce_fields(std::vector<Field> fields,
                                                      const OpOptions& options) {
  auto op = std::make_shared<Op>();
  op->kind = OpKind::fields;
  op->owned.reserve(2 * fields.size());
  for (const Field& f : fields) {
    op->owned.push_back(static_cast<std::int64_t>(f.op));
    op->owned.push_back(f.value);
  }
  op->count = fields.size();
  op->bytes = op->owned.size() * sizeof(std::int64_t);
  auto work = enqueue(state_, std::move(op), options);
  work->wait();
  const std::vector<std::int64_t>& out = work->op().owned;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    fields[i].op = static_cast<FieldOp>(out[2 * i]);
    fields[i].value = out[2 * i + 1];
  }
  return fields;
}

std::vector<std::int64_t> MpiCommunicator::all_gather(const std::vector<std::int64_t>& mine,
                                                      const OpOptions& options) {
  State& s = *state_;
  auto op = std::make_shared<Op>();
  op->kind = OpKind::all_gather;
  op->count = mine.size();
  op->owned.assign(mine.size() * static_cast<std::size_t>(s.size), 0);
  std::copy(mine.begin(), mine.end(),
            op->owned.begin() + static_cast<std::ptrdiff_t>(mine.size() * s.rank));
  op->bytes = mine.size() * sizeof(std::int64_t);
  auto work = enqueue(state_, std::move(op), options);
  work->wait();
  return work->op().owned;
}

std::uint64_t MpiCommunicator::bytes_reduced() const {
  return state_->bytes_reduced.load();
}

void MpiCommunicator::dump_flight_recorder() const {
  state_->dump();
}

std::unique_ptr<Communicator> make_mpi_communicator(const runtime::Runtime& runtime,
                                                    std::string name, const CommConfig& config) {
  return std::make_unique<MpiCommunicator>(runtime, std::move(name), config);
}

}  // namespace slimtrain::comm
