#pragma once
/**
 * @brief Process-wide "how far are you, and what are you doing?" service behind every
 * TimeoutError's list of missing ranks (in the spirit of Horovod's stall inspector).
 *
 * It owns a duplicate of MPI_COMM_WORLD used for nothing else and a responder thread that polls
 * MPI_Iprobe every few milliseconds (a blocking receive would make Open MPI spin a core) and
 * answers inquiries about one communicator with what that rank published (progress.hpp): how
 * many operations it has issued and completed on it, the one it is running there now, an
 * operation it is running on another communicator, and its activity. Communicators are
 * identified by their creation index, which is the same on every rank because communicator
 * creation is collective. What the answers mean is stall_report.hpp's.
 */
#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "slimtrain/comm/progress.hpp"
#include "slimtrain/comm/stall_report.hpp"

namespace slimtrain::runtime {
class Runtime;
}

namespace slimtrain::comm {

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
