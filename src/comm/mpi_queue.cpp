// The MPI backend's communication thread: every operation of a communicator runs here, in
// enqueue order, with the fast blocking MPI calls; callers wait under their deadlines.
#include "slimtrain/comm/detail/mpi_queue.hpp"

#include <algorithm>

#include "slimtrain/comm/chunking.hpp"
#include "slimtrain/comm/detail/mpi_ring.hpp"
#include "slimtrain/comm/missed_deadline.hpp"
#include "slimtrain/core/check_mpi.hpp"

namespace slimtrain::comm {

void MpiCommunicator::State::execute(impl::MpiOp& op) {
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
    case OpKind::reduce_scatter:
      execute_blocks(op);
      return;
    case OpKind::all_gather:
      if (op.data != nullptr) {  // the data plane's: a caller's buffer
        execute_blocks(op);
        return;
      }
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

// Each rank's block goes in pieces of at most chunk_bytes / size elements, so one call moves at
// most chunk_bytes, as all-reduce pieces do; each piece goes round a ring (detail/mpi_ring.hpp),
// read from and written to the caller's buffers in place: no staging, no datatypes.
void MpiCommunicator::State::execute_blocks(impl::MpiOp& op) {
  const std::size_t element = dtype_size(op.dtype);
  const auto n = static_cast<std::size_t>(size);
  const bool scatter = op.kind == OpKind::reduce_scatter;
  const auto* in = static_cast<const char*>(op.in);
  auto* out = static_cast<char*>(op.data);
  detail::RingPiece ring;
  ring.stride = op.count * element;
  ring.type = mpi_type(op.dtype);
  const MPI_Op mop = scatter ? ops->reduce_op(op.dtype, op.reduce) : MPI_OP_NULL;
  const std::vector<Piece> pieces =
      plan_pieces(op.count, element, config.chunk_bytes / n,
                  std::max<std::size_t>(1, config.max_elements_per_call / n));
  for (const Piece& piece : pieces) {
    ring.count = static_cast<int>(piece.count);
    ring.at = piece.offset * element;
    ring.bytes = piece.count * element;
    if (!scatter) {
      detail::ring_all_gather(in + ring.at, out, ring, rank, size, comm);
      continue;
    }
    detail::ring_reduce_scatter(in, out + ring.at, ring, mop, rank, size, comm, ring_scratch);
    if (op.reduce == ReduceOp::avg)
      scale_in_place(out + ring.at, piece.count, op.dtype, 1.0 / size);
  }
}

void MpiCommunicator::State::run() {
  for (;;) {
    std::shared_ptr<impl::MpiOp> op;
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

}  // namespace slimtrain::comm

namespace slimtrain::comm::impl {

void MpiWork::wait() {
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
  if (!timeout_) {
    const MpiOp& op = *op_;
    timeout_ = std::make_exception_ptr(missed_deadline(
        {state_->name, state_->id, {op.seq, op.kind, op.bytes, op.tag}, op.timeout_s},
        *state_->inspector, state_->config.deadline.grace_s, state_->recorder));
  }
  std::rethrow_exception(timeout_);
}

std::shared_ptr<MpiWork> enqueue(const std::shared_ptr<MpiCommunicator::State>& state,
                                 std::shared_ptr<MpiOp> op, const OpOptions& options) {
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
    const bool typed = op->kind == OpKind::all_reduce || op->kind == OpKind::broadcast ||
                       op->kind == OpKind::reduce_scatter || op->data != nullptr;
    s.recorder.enqueued(op->seq, to_string(op->kind), typed ? to_string(op->dtype) : "-", op->bytes,
                        op->tag);
    s.queue.push_back(op);
  }
  s.work_cv.notify_one();
  return std::make_shared<MpiWork>(state, std::move(op));
}

}  // namespace slimtrain::comm::impl
