#pragma once
/**
 * @brief Process-wide "how far are you, and what are you doing?" service behind every
 * TimeoutError's list of missing ranks (in the spirit of Horovod's stall inspector).
 *
 * It owns a duplicate of MPI_COMM_WORLD used for nothing else and a responder thread that polls
 * MPI_Iprobe every few milliseconds (a blocking receive would make Open MPI spin a core) and
 * answers inquiries about one communicator: how many operations this rank has issued and
 * completed on it, the one it is running there now, an operation it is running on another
 * communicator, and what the rank is doing (its activity: "evaluation" at step 8, say).
 * Communicators are identified by their creation index, which is the same on every rank because
 * communicator creation is collective.
 */
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "slimtrain/comm/types.hpp"

namespace slimtrain::runtime {
class Runtime;
}

namespace slimtrain::comm {

/** @brief One operation as stall and desync reports name it. */
struct OpSummary {
  std::uint64_t seq = 0;  ///< 0: none
  OpKind kind = OpKind::none;
  std::uint64_t bytes = 0;
  std::string tag;
  /** @brief "all_reduce #57 of 1,868,076,012 bytes [grad-bucket]" */
  std::string describe() const;
  bool same_operation(const OpSummary& other) const {
    return seq == other.seq && kind == other.kind && bytes == other.bytes;
  }
};

/** @brief "1,868,076,012": byte counts in reports are read by people. */
std::string with_thousands(std::uint64_t value);

/** @brief Counters and the current operation a communicator publishes for inquiries. */
class Progress {
 public:
  std::atomic<std::uint64_t> issued{0};
  std::atomic<std::uint64_t> completed{0};

  /** @brief The operation the communicator is running (or waiting on) now. */
  void set_current(std::uint64_t seq, OpKind kind, std::uint64_t bytes, const char* tag);
  /** @brief Clears the current operation if it is still `seq`. */
  void clear_current(std::uint64_t seq);
  OpSummary current() const;

 private:
  mutable std::mutex mutex_;
  OpSummary current_;
};

/**
 * @brief What this rank is doing now ("forward", "evaluation", "checkpoint write"), answered to
 * peers' stall inquiries with the training step (-1: none). Cheap: call it at every phase.
 */
void set_activity(const char* what, std::int64_t step);

/** @brief One peer's answer; answered == false when it did not answer within the grace period. */
struct PeerProgress {
  int rank = -1;
  std::string host;
  bool answered = false;
  bool known = false;  ///< false: the peer has no communicator with that id (not created or gone)
  std::uint64_t issued = 0;
  std::uint64_t completed = 0;
  OpSummary current;      ///< running on the communicator asked about
  std::string busy_comm;  ///< another communicator on which it runs an operation ("" if none)
  OpSummary busy;
  std::string activity;  ///< "" when the rank never said
  std::int64_t activity_step = -1;
};

/** @brief Ranks that have not reached `seq`, and the message naming them. */
struct StallReport {
  std::vector<int> missing;
  /** @brief "1 on node2 (at seq 4; now: evaluation at step 8, running all_reduce #3 of 816
   * bytes [eval-stats] on eval)" */
  std::string description;
};

/**
 * @brief Pure analysis of the answers about the operation `mine` (this rank's, timed out):
 * missing are the peers that issued fewer operations or did not answer, each with what it is
 * doing now; when every peer has issued it, the peers whose communication is still behind, or
 * that issued a different operation under the same sequence number (a desync), are named.
 */
StallReport analyse_stall(const OpSummary& mine, const std::vector<PeerProgress>& peers);

/** @brief Up to this many ranks every timed-out rank asks every other one (56 messages at 8). */
inline constexpr int kAskEveryoneUpTo = 8;

/**
 * @brief The ranks `rank` asks when an operation times out. When every rank times out together
 * (the usual case: one late rank), everyone asking everyone is N^2 messages inside the grace
 * period, 65,000 at 256 ranks. Above kAskEveryoneUpTo ranks only rank 0 asks every rank (the
 * full report); any other rank asks rank 0 and its two ring neighbours, the ranks a ring
 * all-reduce waits on directly: at most 4 (N - 1) messages in all.
 */
std::vector<int> inquiry_targets(int rank, int size);

class StallInspector {
 public:
  /** @brief The process-wide inspector, created (collectively) on first use. */
  static std::shared_ptr<StallInspector> acquire(const runtime::Runtime& runtime);
  ~StallInspector();
  StallInspector(const StallInspector&) = delete;
  StallInspector& operator=(const StallInspector&) = delete;

  /** @brief Registers a communicator's counters; returns its id (the creation index). */
  std::uint32_t add(std::shared_ptr<Progress> progress, const std::string& name);
  void remove(std::uint32_t id);

  /**
   * @brief Asks the ranks inquiry_targets names about communicator `id`, waiting up to grace_s;
   * their answers, in rank order.
   */
  std::vector<PeerProgress> inquire(std::uint32_t id, double grace_s);
  /** @brief "" when inquire asks every rank, else a note for the report saying whom it asked. */
  std::string inquiry_scope() const;

 private:
  explicit StallInspector(const runtime::Runtime& runtime);
  void respond_loop();
  void poll_once();
  void answer(int dest, const std::int64_t* inquiry);
  void send(int dest, int tag, const std::int64_t* words);
  void test_sends(bool final);

  struct Inquiry {
    std::uint32_t id = 0;
    std::vector<PeerProgress> peers;
    int pending = 0;
  };
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_ptr<std::int64_t[]> words;
  };
  struct Registered {
    std::shared_ptr<Progress> progress;
    std::string name;
  };

  MPI_Comm control_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
  std::uint32_t next_id_ = 0;
  std::int64_t next_inquiry_ = 0;
  std::mutex mutex_;
  std::condition_variable answered_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::map<std::uint32_t, Registered> registered_;
  std::map<std::uint32_t, std::string> names_;  ///< every id ever registered, for busy_comm
  std::map<std::int64_t, Inquiry> inquiries_;
  std::mutex send_mutex_;
  std::vector<PendingSend> sends_;
  std::thread responder_;
};

}  // namespace slimtrain::comm
