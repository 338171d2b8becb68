#include <gtest/gtest.h>

#include <cmath>

#include "slimtrain/core/error.hpp"
#include "slimtrain/train/schedule.hpp"

using namespace slimtrain;
using train::LrSchedule;
using train::ScheduleConfig;

namespace {

std::string config_error_of(double base_lr, const ScheduleConfig& config) {
  try {
    LrSchedule schedule(base_lr, config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST(LrSchedule, WarmupThenCosineToTheFloor) {
  ScheduleConfig c;
  c.kind = "cosine";
  c.warmup_steps = 10;
  c.total_steps = 110;
  c.min_lr_ratio = 0.1;
  const LrSchedule s(0.1, c);
  EXPECT_NEAR(s.lr_at(0), 0.01, 1e-15);  // (0+1)/10 of the base
  EXPECT_NEAR(s.lr_at(4), 0.05, 1e-15);
  EXPECT_NEAR(s.lr_at(9), 0.1, 1e-15);
  EXPECT_NEAR(s.lr_at(10), 0.1, 1e-15);    // cosine starts at the base
  EXPECT_NEAR(s.lr_at(60), 0.055, 1e-15);  // halfway: floor + (base - floor) / 2
  EXPECT_NEAR(s.lr_at(35), 0.01 + 0.09 * 0.5 * (1 + std::cos(M_PI * 0.25)), 1e-15);
  EXPECT_NEAR(s.lr_at(110), 0.01, 1e-15);
  EXPECT_NEAR(s.lr_at(1000), 0.01, 1e-15);  // stays at the floor past the end
  for (std::int64_t step = 11; step <= 110; ++step) EXPECT_LT(s.lr_at(step), s.lr_at(step - 1));
}

TEST(LrSchedule, CosineWithoutWarmupOrFloor) {
  ScheduleConfig c;
  c.total_steps = 4;
  const LrSchedule s(2.0, c);
  EXPECT_DOUBLE_EQ(s.lr_at(0), 2.0);
  EXPECT_NEAR(s.lr_at(2), 1.0, 1e-15);
  EXPECT_NEAR(s.lr_at(4), 0.0, 1e-15);
}

TEST(LrSchedule, StepDecayAfterWarmup) {
  ScheduleConfig c;
  c.kind = "step";
  c.warmup_steps = 2;
  c.step_every = 100;
  c.step_gamma = 0.5;
  const LrSchedule s(1.0, c);
  EXPECT_DOUBLE_EQ(s.lr_at(0), 0.5);
  EXPECT_DOUBLE_EQ(s.lr_at(2), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(101), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(102), 0.5);
  EXPECT_DOUBLE_EQ(s.lr_at(252), 0.25);
}

TEST(LrSchedule, ConstantAndPureInTheStep) {
  ScheduleConfig c;
  c.kind = "constant";
  c.warmup_steps = 4;
  const LrSchedule s(0.3, c);
  EXPECT_DOUBLE_EQ(s.lr_at(3), 0.3);
  EXPECT_DOUBLE_EQ(s.lr_at(1000000), 0.3);
  // A resumed run builds a new schedule and asks for a late step first: same answers.
  ScheduleConfig cos;
  cos.warmup_steps = 5;
  cos.total_steps = 50;
  const LrSchedule first(0.1, cos);
  std::vector<double> forward;
  for (std::int64_t i = 0; i < 60; ++i) forward.push_back(first.lr_at(i));
  const LrSchedule resumed(0.1, cos);
  for (std::int64_t i = 59; i >= 0; --i) EXPECT_EQ(resumed.lr_at(i), forward[std::size_t(i)]);
}

TEST(LrSchedule, BadConfigsNameTheOption) {
  ScheduleConfig c;
  c.kind = "linear";
  EXPECT_NE(config_error_of(0.1, c).find("--lr-schedule: unknown schedule 'linear'"),
            std::string::npos);
  EXPECT_EQ(config_error_of(0.0, {}).rfind("--lr", 0), 0u);
  c = {};
  c.warmup_steps = -1;
  EXPECT_EQ(config_error_of(0.1, c).rfind("--warmup-steps", 0), 0u);
  c = {};
  c.min_lr_ratio = 1.5;
  EXPECT_EQ(config_error_of(0.1, c).rfind("--min-lr-ratio", 0), 0u);
  c = {};
  c.step_every = 0;
  EXPECT_EQ(config_error_of(0.1, c).rfind("--lr-step-every", 0), 0u);
  c = {};
  c.step_gamma = 0;
  EXPECT_EQ(config_error_of(0.1, c).rfind("--lr-step-gamma", 0), 0u);
  c = {};
  c.total_steps = 0;
  EXPECT_NE(config_error_of(0.1, c), "(no ConfigError)");
}
