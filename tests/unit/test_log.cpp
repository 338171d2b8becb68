#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include "slimtrain/core/log.hpp"

using namespace slimtrain;

namespace {
// Captures what the logger writes to stderr (fd 2) during `body`.
template <typename F>
std::string capture_stderr(F body) {
  std::fflush(stderr);
  char path[] = "/tmp/slimtrain-log-XXXXXX";
  const int fd = mkstemp(path);
  const int saved = dup(2);
  dup2(fd, 2);
  body();
  dup2(saved, 2);
  close(saved);
  std::string text;
  char buffer[4096];
  lseek(fd, 0, SEEK_SET);
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  unlink(path);
  return text;
}
}  // namespace

TEST(Log, LineHasTimestampRankAndLevel) {
  set_process_rank(2);
  log::set_level(log::Level::info);
  const std::string out = capture_stderr([] { log::warn("eval skipped at step ", 200); });
  set_process_rank(-1);
  const std::regex line(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z r2 WARN  eval skipped at step 200\n)");
  EXPECT_TRUE(std::regex_match(out, line)) << out;
}

TEST(Log, LevelFiltersAndRankZeroHelper) {
  log::set_level(log::Level::warn);
  EXPECT_EQ(capture_stderr([] { log::info("hidden"); }), "");
  log::set_level(log::Level::info);
  set_process_rank(1);
  EXPECT_EQ(capture_stderr([] { log::info_rank0("only rank 0"); }), "");
  set_process_rank(0);
  EXPECT_NE(capture_stderr([] { log::info_rank0("only rank 0"); }).find("r0 INFO  only rank 0"),
            std::string::npos);
  set_process_rank(-1);
}

// Issue 60: before MPI starts, lines carried "r-" (export's, a lone process's) and every rank of
// an mpirun printed info_rank0's lines. The launcher's rank now; a process alone is rank 0.
TEST(Log, BeforeMpiTheLaunchersRankAndAProcessAloneIsRankZero) {
  log::set_level(log::Level::info);
  set_process_rank(-1);
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}) unsetenv(name);
  EXPECT_NE(capture_stderr([] { log::info("exported"); }).find(" r0 INFO  exported"),
            std::string::npos);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  EXPECT_EQ(launcher_rank(), 1);
  EXPECT_EQ(capture_stderr([] { log::info_rank0("once"); }), "");
  EXPECT_NE(capture_stderr([] { log::warn("mine"); }).find(" r1 WARN  mine"), std::string::npos);
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  EXPECT_NE(capture_stderr([] { log::info_rank0("once"); }).find(" r0 INFO  once"),
            std::string::npos);
  unsetenv("OMPI_COMM_WORLD_RANK");
}

TEST(Log, ParseLevelNamesTheOption) {
  EXPECT_EQ(log::parse_level("debug"), log::Level::debug);
  EXPECT_EQ(log::parse_level("off"), log::Level::off);
  try {
    log::parse_level("loud", "--log-level");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--log-level: 'loud'"), std::string::npos) << e.what();
  }
}
