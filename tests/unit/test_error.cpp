#include <gtest/gtest.h>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"

using namespace slimtrain;

TEST(Error, CarriesRankFileLineAndExitCode) {
  set_process_rank(3);
  try {
    SLIMTRAIN_THROW(ConfigError, "--lr: ", -1.5, " must be positive");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--lr: -1.5 must be positive");
    EXPECT_EQ(e.rank(), 3);
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_EQ(e.describe(), "slimtrain: config error on rank 3: --lr: -1.5 must be positive");
    log::set_level(log::Level::debug);  // where it was thrown, for whoever debugs slimtrain
    const std::string text = e.describe();
    log::set_level(log::Level::info);
    EXPECT_NE(text.find("config error on rank 3 (test_error.cpp:"), std::string::npos) << text;
  }
  set_process_rank(-1);
}

TEST(Error, ExitCodesSeparateUserMistakesFromFailures) {
  EXPECT_EQ(DataError("x", __FILE__, __LINE__).exit_code(), kExitUsage);
  EXPECT_EQ(CommError("x", __FILE__, __LINE__).exit_code(), kExitFailure);
  TimeoutError t("allreduce seq 7 late", {1, 3}, __FILE__, __LINE__);
  EXPECT_EQ(t.exit_code(), kExitFailure);
  EXPECT_EQ(t.missing_ranks(), (std::vector<int>{1, 3}));
  const CommError& as_comm = t;  // a timeout is a communication error
  EXPECT_STREQ(as_comm.kind(), "timeout");
}

TEST(Error, DescribeOmitsUnknownRank) {
  set_process_rank(-1);
  const std::string text =
      DataError("f.h5: /train/y: label 12 out of range", "a/b/c.cpp", 9).describe();
  EXPECT_EQ(text, "slimtrain: data error: f.h5: /train/y: label 12 out of range");
}

TEST(Error, AForeignMessageIsItsFirstLineThatSaysSomething) {
  EXPECT_EQ(foreign_message(std::runtime_error("plain")), "plain");
  EXPECT_EQ(
      foreign_message(std::runtime_error("\n  \nUnknown builtin op: x::y.\nThe original call")),
      "Unknown builtin op: x::y. (more at --log-level debug)");
  EXPECT_EQ(foreign_message(std::runtime_error("one line\n\n")), "one line");
}
