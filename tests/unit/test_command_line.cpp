#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/train_options.hpp"

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

// train's option table on its own (what fuzz_ini runs): the shipped configs parse, and a bad INI
// value is a ConfigError naming the option, without LibTorch or a run.
TEST(TrainOptions, ShippedConfigsParseAndBadValuesNameTheOption) {
  for (const char* ini : {"jobs/fashion_demo.ini", "jobs/fashion_full.ini"}) {
    train::TrainConfig config;
    ASSERT_TRUE(cli::parse_train_options({"--data", "d.h5", "--out", "run", "--config",
                                          std::string(SLIMTRAIN_TEST_SOURCE_DIR "/") + ini},
                                         config))
        << ini;
    EXPECT_FALSE(config.settings.empty());
  }
  const std::string path = ::testing::TempDir() + "/bad_train.ini";
  for (const auto& [line, named] :
       std::vector<std::pair<std::string, std::string>>{{"model = resnet9000", "--model"},
                                                        {"batch-size = 0", "--batch-size"},
                                                        {"mlp-widths = 4,,x", "--mlp-widths"},
                                                        {"lr = fast", "lr"},
                                                        {"no-such-key = 1", "no-such-key"}}) {
    std::ofstream(path) << line << "\n";
    train::TrainConfig config;
    try {
      cli::parse_train_options({"--data", "d.h5", "--out", "run", "--config", path}, config);
      FAIL() << line << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

// Found by fuzz_ini: Boost's error message substitution looped forever on an option or value
// holding one of its placeholders. Refused up front, on the command line and in the INI file.
TEST(CommandLine, PlaceholderTextIsRefusedNotLoopedOn) {
  const std::string path = ::testing::TempDir() + "/placeholder.ini";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--a%canonical_option%b"},
        std::vector<std::string>{"--epochs", "%value%"},
        std::vector<std::string>{"--epochs", "1%invalid_line%"},
        std::vector<std::string>{"--config", path}}) {
    std::ofstream(path) << "warmup-s%canonical_option%-flip = true\n";
    CommandLine cl = make();
    try {
      cl.parse(args);
      FAIL() << args[0] << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot appear in an option or a value"),
                std::string::npos)
          << e.what();
    }
  }
  // A lone percent sign is no placeholder: "50%" reaches Boost, which names the bad value.
  CommandLine cl = make();
  EXPECT_THROW(cl.parse({"--epochs", "50%"}), ConfigError);
  std::remove(path.c_str());
}
