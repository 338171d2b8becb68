// Crash safety: a child process dies (std::_Exit, like kill -9) at each stage of a checkpoint
// write, or hits a full disk (RLIMIT_FSIZE -> EFBIG); the parent checks the previous checkpoint and
// `latest` still load and that find_latest_valid picks the right one.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/error.hpp"
#include "test_ckpt_support.hpp"

namespace slimtrain::ckpt {
namespace {
using testing::TempDir;

// Runs `body` in a forked child and returns its exit status (-1 if it did not exit normally).
template <typename Body>
int run_in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      code = body();
    } catch (...) {
      code = 99;
    }
    std::_Exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Stage {
  const char* name;
  bool new_checkpoint_complete;  // the renamed directory exists and verifies
  bool latest_moved;
};

class CkptCrash : public ::testing::TestWithParam<Stage> {};

TEST_P(CkptCrash, PreviousCheckpointSurvives) {
  const Stage stage = GetParam();
  TempDir dir;
  const std::string checkpoints = checkpoints_dir(dir.path());
  const std::string first = write_checkpoint(checkpoints, testing::small_state(1));
  const CheckpointState second = testing::small_state(2, 4096);

  const int code = run_in_child([&] {
    ::setenv("SLIMTRAIN_CKPT_CRASH_AT", stage.name, 1);
    write_checkpoint(checkpoints, second);
    return 0;  // the crash point did not fire
  });
  ASSERT_EQ(code, kCrashExitCode) << "stage " << stage.name;

  EXPECT_TRUE(CheckpointManager::verify(first).ok);
  EXPECT_EQ(CheckpointManager::load(first).step, 1);
  const auto latest = read_latest_pointer(checkpoints);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(*latest, checkpoints + (stage.latest_moved ? "/step-00000002" : "/step-00000001"));
  EXPECT_TRUE(CheckpointManager::verify(*latest).ok);

  ::testing::internal::CaptureStderr();
  const auto found = CheckpointManager::find_latest_valid(dir.path());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found,
            checkpoints + (stage.new_checkpoint_complete ? "/step-00000002" : "/step-00000001"));
  EXPECT_EQ(warnings.find("WARN"), std::string::npos) << warnings;
  if (stage.new_checkpoint_complete) {
    EXPECT_TRUE(testing::same_bytes(CheckpointManager::load(*found).tensors[0].tensor,
                                    second.tensors[0].tensor));
  }

  // The next save succeeds and sweeps away what the crash left.
  write_checkpoint(checkpoints, testing::small_state(3));
  EXPECT_FALSE(testing::has_tmp_entries(checkpoints));
  EXPECT_EQ(*CheckpointManager::find_latest_valid(dir.path()), checkpoints + "/step-00000003");
}

INSTANTIATE_TEST_SUITE_P(
    EveryStage, CkptCrash,
    ::testing::Values(Stage{"after-tmpdir", false, false}, Stage{"mid-tensors", false, false},
                      Stage{"after-tensors", false, false}, Stage{"after-blobs", false, false},
                      Stage{"after-state", false, false}, Stage{"after-manifest", false, false},
                      Stage{"after-rename", true, false}, Stage{"after-latest-tmp", true, false},
                      Stage{"after-latest", true, true}),
    [](const ::testing::TestParamInfo<Stage>& info) {
      std::string name = info.param.name;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(CkptFullDisk, EfbigLeavesPreviousCheckpointAndAClearError) {
  TempDir dir;
  const std::string checkpoints = checkpoints_dir(dir.path());
  const std::string first = write_checkpoint(checkpoints, testing::small_state(1));
  const CheckpointState big = testing::small_state(2, 1 << 18);  // 1 MiB of float32
  const std::string message_file = dir.path() + "/message.txt";

  const int code = run_in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = 64 * 1024;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    CheckpointManager manager(dir.path(), RetentionPolicy{});
    manager.save_async(big);
    try {
      manager.wait();
    } catch (const Error& e) {
      std::ofstream(message_file) << e.what();
      return 0;
    }
    return 3;  // the write should have failed
  });
  ASSERT_EQ(code, 0);
  std::ifstream in(message_file);
  const std::string message((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(message.find("tensors.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;

  EXPECT_FALSE(testing::has_tmp_entries(checkpoints));
  EXPECT_EQ(testing::entries(checkpoints), (std::vector<std::string>{"latest", "step-00000001"}));
  EXPECT_EQ(*read_latest_pointer(checkpoints), first);
  EXPECT_EQ(CheckpointManager::load(first).step, 1);
  EXPECT_EQ(*CheckpointManager::find_latest_valid(dir.path()), first);
}

}  // namespace
}  // namespace slimtrain::ckpt
