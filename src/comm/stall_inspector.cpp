#include "slimtrain/comm/stall_inspector.hpp"

#include <chrono>

#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::comm {
namespace {
constexpr int kInquiryTag = 7301;
constexpr int kAnswerTag = 7302;
constexpr int kWords =
    5;  // inquiry: {inquiry, comm}; answer: {inquiry, comm, known, issued, completed}
// Polling period of the responder: answers within a few ms at a negligible CPU cost.
constexpr auto kPollPeriod = std::chrono::milliseconds(5);

std::mutex g_instance_mutex;
std::weak_ptr<StallInspector> g_instance;
}  // namespace

StallReport analyse_stall(std::uint64_t seq, const std::vector<PeerProgress>& peers) {
  StallReport report;
  auto add = [&report](int rank, const std::string& why) {
    report.missing.push_back(rank);
    if (!report.description.empty()) report.description += ", ";
    report.description += std::to_string(rank) + " (" + why + ")";
  };
  for (const PeerProgress& p : peers) {
    if (!p.answered) {
      add(p.rank, "no answer");
    } else if (!p.known) {
      add(p.rank, "has no such communicator");
    } else if (p.issued < seq) {
      add(p.rank, "at seq " + std::to_string(p.issued));
    }
  }
  if (report.missing.empty()) {
    // Everyone issued the operation: name the ranks whose communication thread is still behind.
    for (const PeerProgress& p : peers) {
      if (p.completed + 1 < seq) {
        add(p.rank, "issued it but still runs seq " + std::to_string(p.completed + 1));
      }
    }
  }
  if (report.missing.empty()) {
    report.description = "none (every rank has issued seq " + std::to_string(seq) +
                         "; the transport itself is slow or stuck)";
  }
  return report;
}

std::shared_ptr<StallInspector> StallInspector::acquire() {
  std::lock_guard<std::mutex> lock(g_instance_mutex);
  std::shared_ptr<StallInspector> inspector = g_instance.lock();
  if (!inspector) {
    inspector.reset(new StallInspector());
    g_instance = inspector;
  }
  return inspector;
}

StallInspector::StallInspector() {
  SLIMTRAIN_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &control_));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(control_, &rank_));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(control_, &size_));
  if (size_ > 1) responder_ = std::thread([this] { respond_loop(); });
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

std::uint32_t StallInspector::add(std::shared_ptr<Progress> progress) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint32_t id = next_id_++;
  progress_[id] = std::move(progress);
  return id;
}

void StallInspector::remove(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  progress_.erase(id);
}

void StallInspector::send(int dest, int tag, const std::int64_t* words, int n) {
  PendingSend pending;
  pending.words.reset(new std::int64_t[kWords]());
  std::copy(words, words + n, pending.words.get());
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
      // 40-byte buffer rather than block shutdown.
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
      std::int64_t answer[kWords] = {words[0], words[1], 0, 0, 0};
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = progress_.find(static_cast<std::uint32_t>(words[1]));
        if (it != progress_.end()) {
          answer[2] = 1;
          answer[3] = static_cast<std::int64_t>(it->second->issued.load());
          answer[4] = static_cast<std::int64_t>(it->second->completed.load());
        }
      }
      send(status.MPI_SOURCE, kAnswerTag, answer, kWords);
    } else if (status.MPI_TAG == kAnswerTag) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = inquiries_.find(words[0]);
      if (it == inquiries_.end()) continue;  // a late answer to an inquiry already given up
      PeerProgress& peer = it->second.peers[static_cast<std::size_t>(status.MPI_SOURCE)];
      if (!peer.answered) {
        peer.answered = true;
        peer.known = words[2] != 0;
        peer.issued = static_cast<std::uint64_t>(words[3]);
        peer.completed = static_cast<std::uint64_t>(words[4]);
        --it->second.pending;
        answered_.notify_all();
      }
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

std::vector<PeerProgress> StallInspector::inquire(std::uint32_t id, double grace_s) {
  if (size_ == 1) return {};
  std::int64_t inquiry_id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inquiry_id = next_inquiry_++;
    Inquiry& inquiry = inquiries_[inquiry_id];
    inquiry.id = id;
    inquiry.peers.resize(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) inquiry.peers[static_cast<std::size_t>(r)].rank = r;
    inquiry.pending = size_ - 1;
  }
  const std::int64_t words[kWords] = {inquiry_id, static_cast<std::int64_t>(id), 0, 0, 0};
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) send(r, kInquiryTag, words, kWords);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  answered_.wait_until(lock, until, [&] { return inquiries_[inquiry_id].pending == 0; });
  std::vector<PeerProgress> peers;
  for (const PeerProgress& p : inquiries_[inquiry_id].peers) {
    if (p.rank != rank_) peers.push_back(p);
  }
  inquiries_.erase(inquiry_id);
  return peers;
}

}  // namespace slimtrain::comm
