// The MPI backend's communication thread: every operation of a communicator runs here, in
// enqueue order, with the fast blocking MPI calls; callers wait under their deadlines.
#include "slimtrain/comm/detail/mpi_queue.hpp"

#include <algorithm>
#include <cstring>

#include "slimtrain/comm/chunking.hpp"
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
// most chunk_bytes, as all-reduce pieces do. A block that fits is one call on the caller's
// buffers. Pieces of a longer one: a reduce-scatter packs them into a staging buffer (its input is
// read as size() consecutive blocks); an all-gather receives straight into place, each rank's
// piece through a datatype whose extent is one whole block (no staging, no copy).
void MpiCommunicator::State::execute_blocks(impl::MpiOp& op) {
  const std::size_t element = dtype_size(op.dtype);
  const MPI_Datatype type = mpi_type(op.dtype);
  const auto n = static_cast<std::size_t>(size);
  const std::size_t block = op.count * element;
  const bool scatter = op.kind == OpKind::reduce_scatter;
  const auto* in = static_cast<const char*>(op.in);
  auto* out = static_cast<char*>(op.data);
  const std::vector<Piece> pieces =
      plan_pieces(op.count, element, config.chunk_bytes / n,
                  std::max<std::size_t>(1, config.max_elements_per_call / n));
  std::vector<char> staging;
  for (const Piece& piece : pieces) {
    const int c = static_cast<int>(piece.count);
    const std::size_t at = piece.offset * element, bytes = piece.count * element;
    if (scatter) {
      const MPI_Op mop = ops->reduce_op(op.dtype, op.reduce);
      const void* send = in;
      if (pieces.size() > 1) {
        staging.resize(bytes * n);
        for (std::size_t r = 0; r < n; ++r)
          std::memcpy(staging.data() + r * bytes, in + r * block + at, bytes);
        send = staging.data();
      }
      SLIMTRAIN_CHECK_MPI(MPI_Reduce_scatter_block(send, out + at, c, type, mop, comm));
      if (op.reduce == ReduceOp::avg) scale_in_place(out + at, piece.count, op.dtype, 1.0 / size);
      continue;
    }
    const char* mine = in + at;
    const bool in_place = in == out + static_cast<std::size_t>(rank) * block;
    if (pieces.size() == 1) {
      SLIMTRAIN_CHECK_MPI(
          MPI_Allgather(in_place ? MPI_IN_PLACE : mine, c, type, out, c, type, comm));
      continue;
    }
    MPI_Datatype run = MPI_DATATYPE_NULL, strided = MPI_DATATYPE_NULL;
    SLIMTRAIN_CHECK_MPI(MPI_Type_contiguous(c, type, &run));
    SLIMTRAIN_CHECK_MPI(MPI_Type_create_resized(run, 0, static_cast<MPI_Aint>(block), &strided));
    MPI_Type_free(&run);
    SLIMTRAIN_CHECK_MPI(MPI_Type_commit(&strided));
    const int rc =
        MPI_Allgather(in_place ? MPI_IN_PLACE : mine, c, type, out + at, 1, strided, comm);
    MPI_Type_free(&strided);
    SLIMTRAIN_CHECK_MPI(rc);
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
