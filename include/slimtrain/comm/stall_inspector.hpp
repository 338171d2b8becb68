#pragma once
/**
 * @brief Process-wide "how far are you?" service behind every TimeoutError's list of missing ranks
 * (in the spirit of Horovod's stall inspector).
 *
 * It owns a duplicate of MPI_COMM_WORLD used for nothing else and a responder thread that polls
 * MPI_Iprobe every few milliseconds (a blocking receive would make Open MPI spin a core) and
 * answers inquiries with this rank's progress on a communicator: how many operations it has
 * issued and completed. Communicators are identified by their creation index, which is the same
 * on every rank because communicator creation is collective.
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

namespace slimtrain::comm {

/** @brief Progress counters a communicator publishes for inquiries. */
struct Progress {
  std::atomic<std::uint64_t> issued{0};
  std::atomic<std::uint64_t> completed{0};
};

/** @brief One peer's answer; answered == false when it did not answer within the grace period. */
struct PeerProgress {
  int rank = -1;
  bool answered = false;
  bool known = false;  ///< false: the peer has no communicator with that id (not created or gone)
  std::uint64_t issued = 0;
  std::uint64_t completed = 0;
};

/** @brief Ranks that have not reached `seq`, and the message naming them. */
struct StallReport {
  std::vector<int> missing;
  std::string description;  ///< "1 (at seq 4), 3 (no answer)"
};

/**
 * @brief Pure analysis of the answers: missing are the peers that issued fewer than `seq`
 * operations or did not answer; when every peer has issued `seq`, the peers whose comm thread is
 * still behind (completed < seq - 1) are named instead.
 */
StallReport analyse_stall(std::uint64_t seq, const std::vector<PeerProgress>& peers);

class StallInspector {
 public:
  /** @brief The process-wide inspector, created (collectively) on first use. */
  static std::shared_ptr<StallInspector> acquire();
  ~StallInspector();
  StallInspector(const StallInspector&) = delete;
  StallInspector& operator=(const StallInspector&) = delete;

  /** @brief Registers a communicator's counters; returns its id (the creation index). */
  std::uint32_t add(std::shared_ptr<Progress> progress);
  void remove(std::uint32_t id);

  /** @brief Asks every other rank for its progress on communicator `id`, waiting up to grace_s. */
  std::vector<PeerProgress> inquire(std::uint32_t id, double grace_s);

 private:
  StallInspector();
  void respond_loop();
  void poll_once();
  void send(int dest, int tag, const std::int64_t* words, int n);
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

  MPI_Comm control_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::uint32_t next_id_ = 0;
  std::int64_t next_inquiry_ = 0;
  std::mutex mutex_;
  std::condition_variable answered_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::map<std::uint32_t, std::shared_ptr<Progress>> progress_;
  std::map<std::int64_t, Inquiry> inquiries_;
  std::mutex send_mutex_;
  std::vector<PendingSend> sends_;
  std::thread responder_;
};

}  // namespace slimtrain::comm
