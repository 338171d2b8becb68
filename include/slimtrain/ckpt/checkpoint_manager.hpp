#pragma once
/**
 * @brief The trainer's checkpoint front end: asynchronous writes (at most one in flight),
 * retention, verification, loading, and finding the newest checkpoint that verifies.
 */
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_state.hpp"
#include "slimtrain/ckpt/retention.hpp"
#include "slimtrain/ckpt/verify.hpp"

namespace slimtrain::ckpt {

/** @brief Ends the message of a write given up after the I/O deadline (a hung file system), in
 * every layer that gives one up: a caller that would try again knows not to wait that long twice.
 */
inline constexpr const char* kWriteAbandoned = "that write is abandoned";

/** @brief Used on the writing rank (rank 0); the static loaders work on any rank. */
class CheckpointManager {
 public:
  /** @brief Writes under run_dir/checkpoints; ConfigError for an invalid policy. */
  CheckpointManager(std::string run_dir, RetentionPolicy policy);
  /**
   * @brief Waits for a write in flight (no longer than the last wait's timeout); a failure there
   * is logged, not thrown.
   */
  ~CheckpointManager();
  CheckpointManager(const CheckpointManager&) = delete;
  CheckpointManager& operator=(const CheckpointManager&) = delete;

  /**
   * @brief Takes a state whose tensors are already host copies (that copy is the only part
   * training blocks on). Waits for any write in flight, rethrowing its failure (then `state` is
   * not written), and writes `state` on a background thread. `metric` feeds best-of retention.
   */
  void save_async(CheckpointState state, std::optional<double> metric = std::nullopt);
  /**
   * @brief Waits for the write in flight; rethrows its failure (an Error naming file and why).
   * With `timeout_s` >= 0, a write still running after that long is abandoned (its thread left
   * to the hung file system, touching nothing of this manager) and this throws Error naming the
   * step, the folder and the timeout: a hung file system is a failed write, not a hung job.
   */
  void wait(double timeout_s = -1.0);
  /** @brief True while a write is in flight. */
  bool busy() const;
  /** @brief Path of the newest complete checkpoint ("" if none). */
  std::string last_written() const;
  const std::string& checkpoints_dir() const { return checkpoints_dir_; }

  static VerifyReport verify(const std::string& checkpoint_dir);
  /** @brief Verifies first (to `depth`); DataError naming the file on any mismatch. */
  static CheckpointState load(const std::string& checkpoint_dir,
                              VerifyDepth depth = VerifyDepth::checksums,
                              const DeferTensor& defer = {});
  /**
   * @brief Newest checkpoint under run_dir/checkpoints that verifies; corrupt or partial ones are
   * skipped with a log::warn naming them and why; .tmp-* directories are ignored.
   */
  static std::optional<std::string> find_latest_valid(const std::string& run_dir);
  /**
   * @brief The checkpoint a user means by `path`: a step directory as given, or for a run (or
   * checkpoints/) directory its newest checkpoint that verifies. DataError naming `option` when
   * there is none.
   */
  static std::string resolve(const std::string& path, const std::string& option);

  /** @brief Test hook, run on the writer thread before each write. */
  void set_write_hook_for_testing(std::function<void(const CheckpointState&)> hook);

 private:
  // What the writer thread touches: shared, so a thread given up on by wait() can outlive this.
  struct Shared {
    std::mutex mutex;
    std::condition_variable finished;
    std::exception_ptr error;
    std::string last_written;
    bool busy = false;
  };

  std::string checkpoints_dir_;
  RetentionPolicy policy_;
  // Shared with the writer threads, so a hook's own state (a fault plan's count) carries over.
  std::shared_ptr<std::function<void(const CheckpointState&)>> hook_;
  std::thread worker_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::int64_t writing_step_ = -1;
  double timeout_s_ = -1.0;  ///< the last wait's, for the destructor
};

}  // namespace slimtrain::ckpt
