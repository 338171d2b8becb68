// CheckpointManager: asynchronous writes (at most one in flight, failures rethrown by wait) and
// retention (newest N, best by metric, never what `latest` names).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/error.hpp"
#include "test_ckpt_support.hpp"

namespace slimtrain::ckpt {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

std::vector<std::string> step_dirs(const std::string& run_dir) {
  std::vector<std::string> out;
  for (const std::string& name : testing::entries(checkpoints_dir(run_dir)))
    if (name.rfind("step-", 0) == 0) out.push_back(name);
  return out;
}

TEST(CkptRetention, KeepsNewestAndBestByHigherMetric) {
  TempDir dir;
  CheckpointManager manager(dir.path(), RetentionPolicy{2, "accuracy", true});
  const std::vector<std::optional<double>> metrics = {0.5, 0.9, std::nullopt, 0.7, 0.6, 0.65};
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    manager.save_async(testing::small_state(static_cast<std::int64_t>(i + 1)), metrics[i]);
    manager.wait();
  }
  EXPECT_EQ(step_dirs(dir.path()),
            (std::vector<std::string>{"step-00000002", "step-00000005", "step-00000006"}));
  EXPECT_EQ(manager.last_written(), checkpoints_dir(dir.path()) + "/step-00000006");
}

TEST(CkptRetention, LowerIsBetterAndOnlySavesWithAMetricCount) {
  TempDir dir;
  CheckpointManager manager(dir.path(), RetentionPolicy{1, "loss", false});
  const std::vector<std::optional<double>> metrics = {0.3, 0.1, 0.5, std::nullopt, std::nullopt};
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    manager.save_async(testing::small_state(static_cast<std::int64_t>(i + 1)), metrics[i]);
    manager.wait();
  }
  EXPECT_EQ(step_dirs(dir.path()), (std::vector<std::string>{"step-00000002", "step-00000005"}));
}

TEST(CkptRetention, NeverDeletesWhatLatestNamesAndRejectsKeepLastZero) {
  TempDir dir;
  const std::string checkpoints = checkpoints_dir(dir.path());
  for (int step : {1, 2, 3}) write_checkpoint(checkpoints, testing::small_state(step));
  std::ofstream(checkpoints + "/latest", std::ios::trunc) << "step-00000001\n";
  const auto removed = apply_retention(checkpoints, RetentionPolicy{1, "", true});
  EXPECT_EQ(removed, (std::vector<std::string>{checkpoints + "/step-00000002"}));
  EXPECT_EQ(step_dirs(dir.path()), (std::vector<std::string>{"step-00000001", "step-00000003"}));
  EXPECT_FALSE(testing::has_tmp_entries(checkpoints));
  try {
    CheckpointManager bad(dir.path(), RetentionPolicy{0, "", true});
    FAIL() << "keep_last 0 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--keep-last"), std::string::npos);
  }
}

TEST(CkptAsync, ReturnsBeforeTheWriteAndKeepsOneInFlight) {
  TempDir dir;
  CheckpointManager manager(dir.path(), RetentionPolicy{});
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::atomic<int> in_hook{0};
  std::atomic<int> max_in_hook{0};
  std::atomic<int> hooks_run{0};
  manager.set_write_hook_for_testing([&](const CheckpointState& state) {
    const int now = ++in_hook;
    max_in_hook = std::max(max_in_hook.load(), now);
    ++hooks_run;
    if (state.step == 1) opened.wait();
    --in_hook;
  });

  manager.save_async(testing::small_state(1));
  // save_async returned while the writer is held: the write has not happened yet.
  EXPECT_TRUE(manager.busy());
  EXPECT_EQ(manager.last_written(), "");
  EXPECT_FALSE(fs::exists(checkpoints_dir(dir.path()) + "/step-00000001"));

  std::atomic<bool> second_returned{false};
  std::thread second([&] {
    manager.save_async(testing::small_state(2));
    second_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_returned.load()) << "a second write started while one was in flight";
  EXPECT_EQ(hooks_run.load(), 1);
  gate.set_value();
  second.join();
  manager.wait();
  EXPECT_EQ(max_in_hook.load(), 1);
  EXPECT_EQ(hooks_run.load(), 2);
  EXPECT_FALSE(manager.busy());
  EXPECT_EQ(manager.last_written(), checkpoints_dir(dir.path()) + "/step-00000002");
  EXPECT_TRUE(CheckpointManager::verify(manager.last_written()).ok);
}

TEST(CkptAsync, WaitRethrowsTheWriteFailure) {
  TempDir dir;
  CheckpointManager manager(dir.path(), RetentionPolicy{});
  std::ofstream(checkpoints_dir(dir.path())) << "a file where the directory should be";
  manager.save_async(testing::small_state(1));
  try {
    manager.wait();
    FAIL() << "the failed write was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(checkpoints_dir(dir.path())), std::string::npos)
        << e.what();
  }
  manager.wait();  // the error is reported once
  fs::remove(checkpoints_dir(dir.path()));

  manager.set_write_hook_for_testing([](const CheckpointState& state) {
    if (state.step == 3) throw std::runtime_error("disk on fire");
  });
  manager.save_async(testing::small_state(3));
  // The next save_async reports the previous failure instead of losing it.
  try {
    manager.save_async(testing::small_state(4));
    FAIL() << "the failed write was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint write of step 3 failed: disk on fire"),
              std::string::npos)
        << e.what();
  }
  manager.save_async(testing::small_state(5));
  manager.wait();
  EXPECT_EQ(manager.last_written(), checkpoints_dir(dir.path()) + "/step-00000005");
}

}  // namespace
}  // namespace slimtrain::ckpt
