#include "slimtrain/comm/mpi_communicator.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>

#include "slimtrain/comm/detail/mpi_queue.hpp"
#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/core/thread_name.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::comm {
namespace {
using impl::Clock;
using impl::enqueue;
using impl::MpiOp;

// An operation over a caller's buffer; the bytes count toward bytes_reduced when issued.
std::shared_ptr<MpiOp> buffer_op(OpKind kind, void* data, std::size_t count, DType dtype,
                                 std::shared_ptr<void> keep_alive) {
  auto op = std::make_shared<MpiOp>();
  op->kind = kind;
  op->data = data;
  op->count = count;
  op->dtype = dtype;
  op->keep_alive = std::move(keep_alive);
  op->bytes = count * dtype_size(dtype);
  return op;
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
  auto op = buffer_op(OpKind::all_reduce, data, count, dtype, std::move(keep_alive));
  op->reduce = reduce;
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
  auto op = buffer_op(OpKind::broadcast, data, count, dtype, std::move(keep_alive));
  op->root = root;
  state_->bytes_reduced += op->bytes;
  return enqueue(state_, std::move(op), options);
}

std::shared_ptr<Work> MpiCommunicator::reduce_scatter_async(const void* in, void* out,
                                                            std::size_t count, DType dtype,
                                                            ReduceOp reduce,
                                                            const OpOptions& options,
                                                            std::shared_ptr<void> keep_alive) {
  State& s = *state_;
  check_buffer(s.name, "reduce_scatter", in, count);
  check_buffer(s.name, "reduce_scatter", out, count);
  const std::size_t block = count * dtype_size(dtype);
  const char* a = static_cast<const char*>(in);
  const char* b = static_cast<const char*>(out);
  if (count > 0 && b < a + block * static_cast<std::size_t>(s.size) && a < b + block)
    SLIMTRAIN_THROW(ConfigError, s.name, " reduce_scatter: the output overlaps the input");
  if (reduce == ReduceOp::avg && !is_floating(dtype))
    SLIMTRAIN_THROW(ConfigError, s.name, " reduce_scatter: avg needs a floating type, got ",
                    to_string(dtype));
  auto op = buffer_op(OpKind::reduce_scatter, out, count, dtype, std::move(keep_alive));
  op->in = in;
  op->reduce = reduce;
  op->bytes = block * static_cast<std::size_t>(s.size);
  s.bytes_reduced += op->bytes;
  return enqueue(state_, std::move(op), options);
}

std::shared_ptr<Work> MpiCommunicator::all_gather_async(const void* in, void* out,
                                                        std::size_t count, DType dtype,
                                                        const OpOptions& options,
                                                        std::shared_ptr<void> keep_alive) {
  State& s = *state_;
  check_buffer(s.name, "all_gather", in, count);
  check_buffer(s.name, "all_gather", out, count);
  auto op = buffer_op(OpKind::all_gather, out, count, dtype, std::move(keep_alive));
  op->in = in;
  op->bytes = count * dtype_size(dtype) * static_cast<std::size_t>(s.size);
  s.bytes_reduced += op->bytes;
  return enqueue(state_, std::move(op), options);
}

void MpiCommunicator::barrier(const OpOptions& options) {
  auto op = std::make_shared<MpiOp>();
  op->kind = OpKind::barrier;
  enqueue(state_, std::move(op), options)->wait();
}

bool MpiCommunicator::agree(bool mine, const OpOptions& options) {
  auto op = std::make_shared<MpiOp>();
  op->kind = OpKind::agree;
  op->flag = mine ? 1 : 0;
  op->bytes = sizeof(int);
  auto work = enqueue(state_, std::move(op), options);
  work->wait();
  return work->op().flag != 0;
}

std::vector<Field> MpiCommunicator::all_reduce_fields(std::vector<Field> fields,
                                                      const OpOptions& options) {
  auto op = std::make_shared<MpiOp>();
  op->kind = OpKind::fields;
  op->owned.reserve(2 * fields.size());
  for (const Field& f : fields) {
    op->owned.push_back(static_cast<std::int64_t>(f.op));
    op->owned.push_back(f.value);
  }
  op->count = fields.size();
  op->bytes = op->owned.size() * sizeof(std::int64_t);
  state_->bytes_reduced += op->bytes;  // the step's control traffic counts too (bench/control)
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
  auto op = std::make_shared<MpiOp>();
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
