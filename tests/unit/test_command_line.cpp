#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"

using namespace slimtrain;
using slimtrain::cli::CommandLine;
namespace po = boost::program_options;

namespace {
CommandLine make() {
  CommandLine cl("demo", "slimtrain demo [options]", "A test command.");
  cl.add()("lr", po::value<double>()->default_value(0.1), "learning rate")(
      "epochs", po::value<int>()->default_value(1), "epochs");
  cl.enable_config_file();
  return cl;
}
}  // namespace

TEST(CommandLine, DefaultsAndValues) {
  CommandLine cl = make();
  ASSERT_TRUE(cl.parse({"--lr", "0.5"}));
  EXPECT_DOUBLE_EQ(cl.get<double>("lr"), 0.5);
  EXPECT_EQ(cl.get<int>("epochs"), 1);
  EXPECT_TRUE(cl.has("lr"));
  EXPECT_FALSE(cl.has("epochs"));
}

TEST(CommandLine, BadValueAndUnknownOptionNameTheOption) {
  CommandLine a = make();
  try {
    a.parse({"--lr", "fast"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--lr"), std::string::npos) << e.what();
  }
  CommandLine b = make();
  try {
    b.parse({"--learning-rate", "1"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--learning-rate"), std::string::npos) << e.what();
  }
}

TEST(CommandLine, ConfigFileFillsGapsAndCommandLineWins) {
  const std::string path = ::testing::TempDir() + "slimtrain_cl.ini";
  {
    std::ofstream ini(path);
    ini << "lr = 0.25\nepochs = 7\n";
  }
  CommandLine cl = make();
  ASSERT_TRUE(cl.parse({"--config", path, "--lr", "0.01"}));
  EXPECT_DOUBLE_EQ(cl.get<double>("lr"), 0.01);
  EXPECT_EQ(cl.get<int>("epochs"), 7);

  {
    std::ofstream ini(path);
    ini << "momentum = 0.9\n";
  }
  CommandLine bad = make();
  EXPECT_THROW(bad.parse({"--config", path}), ConfigError);
  std::remove(path.c_str());
}

TEST(CommandLine, RangeCheckNamesOption) {
  try {
    cli::require_range("--batch-size", 0, 1, 1 << 20);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--batch-size: 0 is outside"), std::string::npos);
  }
}

TEST(App, ListsSixSubcommands) {
  std::vector<std::string> names;
  for (const auto& c : cli::commands()) names.push_back(c.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"prep", "train", "eval", "inspect", "export", "report"}));
}
