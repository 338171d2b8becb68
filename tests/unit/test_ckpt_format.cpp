// On-disk format: round trip of every dtype and blob, and detection of corrupt, truncated or
// partial checkpoints by verify, load and find_latest_valid.
#include <filesystem>
#include <fstream>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/inspect.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/verify.hpp"
#include "slimtrain/core/error.hpp"
#include "test_ckpt_support.hpp"

namespace slimtrain::ckpt {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

TEST(CkptFormat, RoundTripsEveryDtypeBlobsAndCounters) {
  TempDir dir;
  CheckpointState state;
  state.step = 7;
  state.epoch = 2;
  state.epoch_step = 5;
  state.meta = {{"model", {{"name", "cnn"}}}, {"metrics", {{"accuracy", 0.875}}}};
  state.tensors = {
      {"model/a", torch::randn({3, 4})},
      {"model/b", torch::randn({2}, torch::kFloat64)},
      {"model/scalar", torch::tensor(int64_t{123456789012})},
      {"model/u8", torch::arange(5, torch::kUInt8)},
      {"model/flag", torch::tensor({true, false, true, true}).reshape({2, 2})},
      {"model/half", torch::randn({3}).to(torch::kBFloat16)},
      {"model/empty", torch::empty({0, 3})},
      {"model/transposed", torch::randn({4, 5}).t()},  // not contiguous: written contiguous
  };
  state.blobs["optimizer"] = std::string("\0\1\2binary", 9);
  state.blobs["rng"] = "state";
  const std::string path = write_checkpoint(checkpoints_dir(dir.path()), state, 0.5);
  EXPECT_EQ(path, checkpoints_dir(dir.path()) + "/step-00000007");
  EXPECT_EQ(read_latest_pointer(checkpoints_dir(dir.path())).value(), path);
  EXPECT_TRUE(CheckpointManager::verify(path).ok) << CheckpointManager::verify(path).problem;

  const CheckpointState back = CheckpointManager::load(path);
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.epoch, 2);
  EXPECT_EQ(back.epoch_step, 5);
  EXPECT_EQ(back.meta, state.meta);
  EXPECT_EQ(back.blobs, state.blobs);
  ASSERT_EQ(back.tensors.size(), state.tensors.size());
  for (std::size_t i = 0; i < state.tensors.size(); ++i) {
    EXPECT_EQ(back.tensors[i].name, state.tensors[i].name);
    EXPECT_TRUE(testing::same_bytes(back.tensors[i].tensor, state.tensors[i].tensor))
        << state.tensors[i].name;
  }
  EXPECT_FALSE(testing::has_tmp_entries(checkpoints_dir(dir.path())));
}

TEST(CkptFormat, FlippedByteIsDetectedAndNamed) {
  TempDir dir;
  const std::string path = write_checkpoint(checkpoints_dir(dir.path()), testing::small_state(1));
  testing::flip_byte(path + "/tensors.bin", 100);
  const VerifyReport report = CheckpointManager::verify(path);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.problem.find("tensors.bin: checksum mismatch"), std::string::npos)
      << report.problem;
  try {
    CheckpointManager::load(path);
    FAIL() << "load of a corrupt checkpoint succeeded";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("tensors.bin"), std::string::npos) << e.what();
  }
}

TEST(CkptFormat, TruncatedFileIsDetected) {
  TempDir dir;
  const std::string path = write_checkpoint(checkpoints_dir(dir.path()), testing::small_state(1));
  fs::resize_file(path + "/blob-optimizer.bin", 3);
  const VerifyReport report = CheckpointManager::verify(path);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.problem.find("blob-optimizer.bin: size mismatch"), std::string::npos)
      << report.problem;
  EXPECT_NE(report.problem.find("truncated"), std::string::npos) << report.problem;
}

TEST(CkptFormat, MissingOrEditedManifestIsDetected) {
  TempDir dir;
  const std::string path = write_checkpoint(checkpoints_dir(dir.path()), testing::small_state(3));
  {
    std::string text;
    std::ifstream in(path + "/manifest.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
    const auto at = text.find("\"created_unix\": ");
    ASSERT_NE(at, std::string::npos);
    text[at + 17] = text[at + 17] == '1' ? '2' : '1';
    std::ofstream(path + "/manifest.json", std::ios::trunc) << text;
  }
  VerifyReport report = CheckpointManager::verify(path);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.problem.find("its own checksum"), std::string::npos) << report.problem;
  fs::remove(path + "/manifest.json");
  report = CheckpointManager::verify(path);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.problem.find("manifest.json: missing"), std::string::npos) << report.problem;
}

// Found by fuzz_checkpoint: fields of another type than written threw nlohmann's type_error out of
// verification (a crash in the fuzzer, exit 1 in the binary); they are a damaged manifest.
TEST(CkptFormat, ManifestFieldsOfTheWrongTypeAreDetected) {
  TempDir dir;
  const std::string path = write_checkpoint(checkpoints_dir(dir.path()), testing::small_state(3));
  nlohmann::json m = nlohmann::json::parse(std::ifstream(path + "/manifest.json"));
  m["tensors"][0]["shape"] = {"x"};  // with a valid self-checksum: only the type is wrong
  m["manifest_xxh3"] = manifest_self_checksum(m);
  std::ofstream(path + "/manifest.json", std::ios::trunc) << m.dump();
  VerifyReport report = CheckpointManager::verify(path);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.problem.find("manifest.json: a field has the wrong type"), std::string::npos)
      << report.problem;
  std::ofstream(path + "/manifest.json", std::ios::trunc) << R"({"format": 1, "version": 1})";
  report = CheckpointManager::verify(path);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.problem.find("a field has the wrong type"), std::string::npos) << report.problem;
}

TEST(CkptFormat, FindLatestValidSkipsBrokenOnesWithAWarning) {
  TempDir dir;
  const std::string checkpoints = checkpoints_dir(dir.path());
  EXPECT_FALSE(CheckpointManager::find_latest_valid(dir.path()).has_value());
  for (int step : {1, 2, 3}) write_checkpoint(checkpoints, testing::small_state(step));
  testing::flip_byte(checkpoints + "/step-00000003/tensors.bin", 10);
  fs::resize_file(checkpoints + "/step-00000002/state.json", 5);
  // A partial write from a crashed process must be ignored, not even reported.
  fs::create_directory(checkpoints + "/.tmp-step-00000004-999");

  ::testing::internal::CaptureStderr();
  const auto found = CheckpointManager::find_latest_valid(dir.path());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, checkpoints + "/step-00000001");
  EXPECT_NE(warnings.find("skipping " + checkpoints + "/step-00000003: " + checkpoints +
                          "/step-00000003/tensors.bin: checksum mismatch"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("step-00000002/state.json: size mismatch"), std::string::npos)
      << warnings;
  EXPECT_EQ(warnings.find("step-00000004"), std::string::npos) << warnings;

  // The next save cleans the stale temporary directory.
  write_checkpoint(checkpoints, testing::small_state(5));
  EXPECT_FALSE(testing::has_tmp_entries(checkpoints));
}

TEST(CkptFormat, SameStepIsReplacedWhole) {
  TempDir dir;
  const std::string checkpoints = checkpoints_dir(dir.path());
  CheckpointState first = testing::small_state(4);
  write_checkpoint(checkpoints, first);
  CheckpointState second = testing::small_state(4);
  second.tensors[0].tensor = second.tensors[0].tensor.neg();
  const std::string path = write_checkpoint(checkpoints, second);
  const CheckpointState back = CheckpointManager::load(path);
  EXPECT_TRUE(testing::same_bytes(back.tensors[0].tensor, second.tensors[0].tensor));
  EXPECT_FALSE(testing::has_tmp_entries(checkpoints));
}

TEST(CkptFormat, BadStateIsRejectedAndLeavesNothingBehind) {
  TempDir dir;
  const std::string checkpoints = checkpoints_dir(dir.path());
  write_checkpoint(checkpoints, testing::small_state(1));
  CheckpointState bad = testing::small_state(2);
  bad.blobs["no/slashes"] = "x";
  EXPECT_THROW(write_checkpoint(checkpoints, bad), ConfigError);
  CheckpointState twice = testing::small_state(2);
  twice.tensors.push_back(twice.tensors[0]);
  try {
    write_checkpoint(checkpoints, twice);
    FAIL() << "duplicate tensor names accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model/fc.weight' appears twice"), std::string::npos);
  }
  EXPECT_EQ(testing::entries(checkpoints), (std::vector<std::string>{"latest", "step-00000001"}));
}

TEST(CkptInspect, PrintsAndVerifies) {
  TempDir dir;
  const std::string path =
      write_checkpoint(checkpoints_dir(dir.path()), testing::small_state(100), 0.25);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(inspect_checkpoint(path, false), 0);
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("step        100"), std::string::npos) << out;
  EXPECT_NE(out.find("tensors     2 (280 bytes)"), std::string::npos) << out;
  EXPECT_NE(out.find("\"mlp\""), std::string::npos) << out;
  EXPECT_NE(out.find("\nverified\n"), std::string::npos) << out;
  EXPECT_TRUE(is_checkpoint_path(path));
  EXPECT_TRUE(is_checkpoint_path(dir.path()));

  testing::flip_byte(path + "/tensors.bin", 0);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(inspect_checkpoint(dir.path(), true), 2);  // the run directory resolves via latest
  out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  const auto doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["verified"], false);
  EXPECT_EQ(doc["step"], 100);
  EXPECT_EQ(doc["files"][0]["status"], "checksum mismatch");
  EXPECT_NE(err.find("tensors.bin: checksum mismatch"), std::string::npos) << err;
}

}  // namespace
}  // namespace slimtrain::ckpt
