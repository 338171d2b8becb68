#include "slimtrain/comm/stall_inspector.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "slimtrain/comm/words.hpp"
#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/core/thread_name.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::comm {
namespace {
constexpr int kInquiryTag = 7301;
constexpr int kAnswerTag = 7302;
// Inquiry: {inquiry, comm}. Answer: {inquiry, comm, known, issued, completed, current op (5),
// busy comm, busy op (5), activity step, activity text (3)}.
constexpr int kWords = 20;
constexpr int kTagWords = (kTagChars + 1) / 8;
constexpr int kActivityWords = (kActivityChars + 1) / 8;
// Polling period of the responder. Each MPI_Iprobe runs Open MPI's progress engine, which under
// MPI_THREAD_MULTIPLE contends with the communicators' workers: at 5 ms the responder wanted a
// core in a third of the samples (e2e_train_threads), beside the rank's compute thread. Inquiries
// come after a deadline of seconds, so 50 ms answers are as good.
constexpr auto kPollPeriod = std::chrono::milliseconds(50);

std::mutex g_instance_mutex;
std::weak_ptr<StallInspector> g_instance;

void pack_op(const OpSummary& op, std::int64_t* words) {
  words[0] = static_cast<std::int64_t>(op.seq);
  words[1] = static_cast<std::int64_t>(op.kind);
  words[2] = static_cast<std::int64_t>(op.bytes);
  pack_text(op.tag, words + 3, kTagWords);
}

OpSummary unpack_op(const std::int64_t* words) {
  OpSummary op;
  op.seq = static_cast<std::uint64_t>(words[0]);
  op.kind = static_cast<OpKind>(words[1]);
  op.bytes = static_cast<std::uint64_t>(words[2]);
  op.tag = unpack_text(words + 3, kTagWords);
  return op;
}

}  // namespace

std::shared_ptr<StallInspector> StallInspector::acquire(const runtime::Runtime& runtime) {
  std::lock_guard<std::mutex> lock(g_instance_mutex);
  std::shared_ptr<StallInspector> inspector = g_instance.lock();
  if (!inspector) {
    inspector.reset(new StallInspector(runtime));
    g_instance = inspector;
  }
  return inspector;
}

StallInspector::StallInspector(const runtime::Runtime& runtime) : hosts_(runtime.hostnames()) {
  SLIMTRAIN_CHECK_MPI(MPI_Comm_dup(runtime.world(), &control_));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(control_, &rank_));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(control_, &size_));
  if (size_ > 1)
    responder_ = std::thread([this] {
      name_this_thread("stall-watch");
      respond_loop();
    });
}

StallInspector::~StallInspector() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (responder_.joinable()) responder_.join();
  test_sends(true);
  // Drain messages that arrived after the last poll so none is left on the freed communicator.
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, control_, &flag, &status) != MPI_SUCCESS || !flag)
      break;
    std::int64_t words[kWords];
    MPI_Recv(words, kWords, MPI_INT64_T, status.MPI_SOURCE, status.MPI_TAG, control_,
             MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&control_);
}

std::uint32_t StallInspector::add(std::shared_ptr<Progress> progress, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint32_t id = next_id_++;
  registered_[id] = Registered{std::move(progress), name};
  names_[id] = name;
  return id;
}

void StallInspector::remove(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  registered_.erase(id);
}

void StallInspector::send(int dest, int tag, const std::int64_t* words) {
  PendingSend pending;
  pending.words.reset(new std::int64_t[kWords]());
  std::copy(words, words + kWords, pending.words.get());
  const int rc =
      MPI_Isend(pending.words.get(), kWords, MPI_INT64_T, dest, tag, control_, &pending.request);
  if (rc != MPI_SUCCESS) {
    log::warn("stall inspector: MPI_Isend to rank ", dest,
              " failed: ", detail::mpi_error_string(rc));
    return;
  }
  std::lock_guard<std::mutex> lock(send_mutex_);
  sends_.push_back(std::move(pending));
}

void StallInspector::test_sends(bool final) {
  std::lock_guard<std::mutex> lock(send_mutex_);
  for (auto it = sends_.begin(); it != sends_.end();) {
    int done = 0;
    if (MPI_Test(&it->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) done = 1;
    if (!done && final) {
      // The peer never received it (its inspector is gone). Tiny messages are sent eagerly, so
      // this is rare; cancel, and if even that does not complete, free the request and leak the
      // buffer rather than block shutdown.
      MPI_Cancel(&it->request);
      for (int i = 0; i < 100 && !done; ++i) {
        MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
        if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!done) {
        MPI_Request_free(&it->request);
        it->words.release();
        done = 1;
      }
    }
    it = done ? sends_.erase(it) : it + 1;
  }
}

void StallInspector::answer(int dest, const std::int64_t* inquiry) {
  std::int64_t words[kWords] = {};
  words[0] = inquiry[0];
  words[1] = inquiry[1];
  words[10] = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto asked = static_cast<std::uint32_t>(inquiry[1]);
    auto it = registered_.find(asked);
    if (it != registered_.end()) {
      words[2] = 1;
      words[3] = static_cast<std::int64_t>(it->second.progress->issued.load());
      words[4] = static_cast<std::int64_t>(it->second.progress->completed.load());
      pack_op(it->second.progress->current(), words + 5);
    }
    // An operation running on another communicator says where the rank really is.
    for (const auto& [id, entry] : registered_) {
      if (id == asked) continue;
      const OpSummary busy = entry.progress->current();
      if (busy.seq == 0) continue;
      words[10] = id;
      pack_op(busy, words + 11);
      break;
    }
  }
  const Activity activity = current_activity();
  words[16] = activity.step;
  pack_text(activity.what, words + 17, kActivityWords);
  send(dest, kAnswerTag, words);
}

void StallInspector::poll_once() {
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, control_, &flag, &status) != MPI_SUCCESS || !flag)
      break;
    std::int64_t words[kWords] = {};
    if (MPI_Recv(words, kWords, MPI_INT64_T, status.MPI_SOURCE, status.MPI_TAG, control_,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      continue;
    }
    if (status.MPI_TAG == kInquiryTag) {
      answer(status.MPI_SOURCE, words);
    } else if (status.MPI_TAG == kAnswerTag) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = inquiries_.find(words[0]);
      if (it == inquiries_.end()) continue;  // a late answer to an inquiry already given up
      PeerProgress& peer = it->second.peers[static_cast<std::size_t>(status.MPI_SOURCE)];
      if (peer.answered) continue;
      peer.answered = true;
      peer.known = words[2] != 0;
      peer.issued = static_cast<std::uint64_t>(words[3]);
      peer.completed = static_cast<std::uint64_t>(words[4]);
      peer.current = unpack_op(words + 5);
      if (words[10] >= 0) {
        auto name = names_.find(static_cast<std::uint32_t>(words[10]));
        peer.busy_comm = name != names_.end() ? name->second : "#" + std::to_string(words[10]);
        peer.busy = unpack_op(words + 11);
      }
      peer.activity_step = words[16];
      peer.activity = unpack_text(words + 17, kActivityWords);
      --it->second.pending;
      answered_.notify_all();
    }
  }
}

void StallInspector::respond_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    poll_once();
    test_sends(false);
    lock.lock();
    stop_cv_.wait_for(lock, kPollPeriod, [this] { return stop_; });
  }
}

std::string StallInspector::inquiry_scope() const {
  const std::vector<int> targets = inquiry_targets(rank_, size_);
  if (static_cast<int>(targets.size()) == size_ - 1) return "";
  std::string asked;
  for (int r : targets) asked += (asked.empty() ? "" : ", ") + std::to_string(r);
  return " [this rank asked ranks " + asked + " only; rank 0's report covers every rank]";
}

std::vector<PeerProgress> StallInspector::inquire(std::uint32_t id, double grace_s) {
  if (size_ == 1) return {};
  const std::vector<int> targets = inquiry_targets(rank_, size_);
  std::int64_t inquiry_id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inquiry_id = next_inquiry_++;
    Inquiry& inquiry = inquiries_[inquiry_id];
    inquiry.id = id;
    inquiry.peers.resize(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      PeerProgress& p = inquiry.peers[static_cast<std::size_t>(r)];
      p.rank = r;
      if (static_cast<std::size_t>(r) < hosts_.size()) p.host = hosts_[static_cast<std::size_t>(r)];
    }
    inquiry.pending = static_cast<int>(targets.size());
  }
  std::int64_t words[kWords] = {};
  words[0] = inquiry_id;
  words[1] = static_cast<std::int64_t>(id);
  for (int r : targets) send(r, kInquiryTag, words);
  std::unique_lock<std::mutex> lock(mutex_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  answered_.wait_until(lock, until, [&] { return inquiries_[inquiry_id].pending == 0; });
  std::vector<PeerProgress> peers;
  for (int r : targets) peers.push_back(inquiries_[inquiry_id].peers[static_cast<std::size_t>(r)]);
  inquiries_.erase(inquiry_id);
  return peers;
}

}  // namespace slimtrain::comm
