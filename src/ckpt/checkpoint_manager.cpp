#include "slimtrain/ckpt/checkpoint_manager.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/core/thread_name.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;

CheckpointManager::CheckpointManager(std::string run_dir, RetentionPolicy policy)
    : checkpoints_dir_(ckpt::checkpoints_dir(run_dir)), policy_(std::move(policy)) {
  validate(policy_);
  if (const auto latest = read_latest_pointer(checkpoints_dir_)) {
    std::error_code ec;
    if (fs::exists(*latest + "/" + kManifestFile, ec)) shared_->last_written = *latest;
  }
}

CheckpointManager::~CheckpointManager() {
  try {
    wait(timeout_s_);
  } catch (const std::exception& e) {
    log::error("checkpoint write failed: ", e.what());
  }
}

void CheckpointManager::save_async(CheckpointState state, std::optional<double> metric) {
  wait(timeout_s_);
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->busy = true;
  }
  writing_step_ = state.step;
  // The thread holds copies and the shared state only: nothing of `this`.
  worker_ = std::thread([shared = shared_, dir = checkpoints_dir_, policy = policy_, hook = hook_,
                         state = std::move(state), metric]() {
    name_this_thread("ckpt-writer");
    std::exception_ptr error;
    std::string path;
    try {
      if (hook) (*hook)(state);
      path = write_checkpoint(dir, state, metric);
      apply_retention(dir, policy);
    } catch (const Error& e) {
      error = std::current_exception();
      // Said now as well as when the write is waited for: a job that dies before then would
      // otherwise not say why its steps since the previous checkpoint were lost.
      log::warn("checkpoint of step ", state.step, ": the write failed: ", e.what());
    } catch (const std::exception& e) {
      log::warn("checkpoint of step ", state.step, ": the write failed: ", e.what());
      // Foreign exceptions (filesystem, torch) become an Error that says which write failed.
      error = std::make_exception_ptr(
          Error(detail::concat("checkpoint write of step ", state.step, " failed: ", e.what()),
                __FILE__, __LINE__));
    }
    std::lock_guard<std::mutex> lock(shared->mutex);
    if (!path.empty()) shared->last_written = path;
    shared->error = error;
    shared->busy = false;
    shared->finished.notify_all();
  });
}

void CheckpointManager::wait(double timeout_s) {
  if (timeout_s >= 0) timeout_s_ = timeout_s;
  if (worker_.joinable() && timeout_s >= 0) {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    const bool done = shared_->finished.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                                 [this] { return !shared_->busy; });
    if (!done) {
      const std::string latest = shared_->last_written;
      lock.unlock();
      worker_.detach();
      shared_ = std::make_shared<Shared>();  // the abandoned thread keeps the old one
      shared_->last_written = latest;
      SLIMTRAIN_THROW(Error, "the checkpoint write of step ", writing_step_,
                      " has not finished after ", timeout_s,
                      " s (--io-timeout): the file system "
                      "under ",
                      checkpoints_dir_, " is not answering; ", kWriteAbandoned);
    }
  }
  if (worker_.joinable()) worker_.join();
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    std::swap(error, shared_->error);
  }
  if (error) std::rethrow_exception(error);
}

bool CheckpointManager::busy() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->busy;
}

std::string CheckpointManager::last_written() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->last_written;
}

void CheckpointManager::set_write_hook_for_testing(
    std::function<void(const CheckpointState&)> hook) {
  wait(timeout_s_);
  hook_ = std::make_shared<std::function<void(const CheckpointState&)>>(std::move(hook));
}

VerifyReport CheckpointManager::verify(const std::string& checkpoint_dir) {
  return verify_checkpoint(checkpoint_dir).report;
}

CheckpointState CheckpointManager::load(const std::string& checkpoint_dir, VerifyDepth depth,
                                        const DeferTensor& defer) {
  return read_checkpoint(checkpoint_dir, depth, defer);
}

std::optional<std::string> CheckpointManager::find_latest_valid(const std::string& run_dir) {
  const std::string checkpoints = ckpt::checkpoints_dir(run_dir);
  std::vector<std::pair<std::int64_t, std::string>> candidates;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoints, ec)) {
    const auto step = parse_step_dir_name(entry.path().filename().string());
    if (step) candidates.emplace_back(*step, entry.path().string());
  }
  std::sort(candidates.rbegin(), candidates.rend());
  const auto latest = read_latest_pointer(checkpoints);
  for (const auto& [step, path] : candidates) {
    const VerifyReport report = verify(path);
    if (!report.ok) {
      log::warn("checkpoint: skipping ", path, ": ", report.problem);
      continue;
    }
    // A directory newer than `latest` is complete (its manifest was inside before the rename):
    // only the pointer update was lost.
    if (latest && *latest != path)
      log::info("checkpoint: using ", path, " (", checkpoints, "/latest names ", *latest, ")");
    return path;
  }
  return std::nullopt;
}

std::string CheckpointManager::resolve(const std::string& path, const std::string& option) {
  std::error_code ec;
  if (fs::exists(fs::path(path) / kManifestFile, ec) ||
      parse_step_dir_name(fs::path(path).lexically_normal().filename().string()))
    return path;
  // RUN_DIR or RUN_DIR/checkpoints: both hold (or are) the checkpoints directory.
  const fs::path normal = fs::path(path).lexically_normal();
  const std::string run_dir =
      normal.filename() == "checkpoints" ? normal.parent_path().string() : path;
  if (!fs::is_directory(ckpt::checkpoints_dir(run_dir), ec))
    SLIMTRAIN_THROW(DataError, option, " ", path,
                    ": not a checkpoint (step-NNNNNNNN) nor a run directory with checkpoints/");
  const auto found = find_latest_valid(run_dir);
  if (!found)
    SLIMTRAIN_THROW(DataError, option, " ", path, ": no checkpoint under ",
                    ckpt::checkpoints_dir(run_dir), " verifies");
  return *found;
}

}  // namespace slimtrain::ckpt
