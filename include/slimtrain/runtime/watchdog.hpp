#pragma once
/**
 * @brief A deadline around a phase that cannot be interrupted once entered (a collective HDF5
 * write: a rank inside MPI-IO waits for its peers with no timeout of its own). Past the deadline
 * it names the phase and ends the job (abort_job), so a rank that failed or stalled inside the
 * phase cannot leave the others blocked forever.
 */
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace slimtrain::runtime {

class Watchdog {
 public:
  /** @brief Starts watching `phase` for `seconds`. */
  Watchdog(double seconds, std::string phase);
  /** @brief Disarms: the phase ended in time. */
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace slimtrain::runtime
