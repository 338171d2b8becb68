// SLIMTRAIN_INJECT parsing and arming: the e2e fault tests rely on exactly when a plan fires.
#include <gtest/gtest.h>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/fault_injection.hpp"

namespace st = slimtrain;

namespace {

std::string parse_error(const std::string& spec) {
  try {
    st::FaultPlan::parse(spec);
  } catch (const slimtrain::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(FaultInjection, DelayParsesUnitsAndFiresOnlyAtItsRankPhaseAndStep) {
  const st::FaultPlan p = st::FaultPlan::parse("rank=1,phase=eval,step=200,delay=8s");
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.phase, st::FaultPhase::eval);
  EXPECT_EQ(p.step, 200);
  EXPECT_EQ(p.action, st::FaultAction::delay);
  EXPECT_DOUBLE_EQ(p.delay_s, 8.0);
  EXPECT_TRUE(p.armed(1, st::FaultPhase::eval, 200));
  EXPECT_FALSE(p.armed(0, st::FaultPhase::eval, 200));
  EXPECT_FALSE(p.armed(1, st::FaultPhase::train, 200));
  EXPECT_FALSE(p.armed(1, st::FaultPhase::eval, 201));
  EXPECT_FALSE(p.armed(1, st::FaultPhase::eval, 199));
  EXPECT_DOUBLE_EQ(st::FaultPlan::parse("rank=0,phase=eval,step=1,delay=250ms").delay_s, 0.25);
  EXPECT_DOUBLE_EQ(st::FaultPlan::parse("rank=0,phase=eval,step=1,delay=2m").delay_s, 120.0);
  EXPECT_DOUBLE_EQ(st::FaultPlan::parse("rank=0,phase=eval,step=1,delay=3").delay_s, 3.0);
}

TEST(FaultInjection, HangPersistsFromItsStepOn) {
  const st::FaultPlan p = st::FaultPlan::parse("rank=1,phase=train,step=5,action=hang");
  EXPECT_EQ(p.action, st::FaultAction::hang);
  EXPECT_FALSE(p.armed(1, st::FaultPhase::train, 4));
  EXPECT_TRUE(p.armed(1, st::FaultPhase::train, 5));
  EXPECT_TRUE(p.armed(1, st::FaultPhase::train, 9));
  const st::FaultPlan e = st::FaultPlan::parse("rank=1,phase=train,step=5,action=exit");
  EXPECT_TRUE(e.armed(1, st::FaultPhase::train, 5));
  EXPECT_FALSE(e.armed(1, st::FaultPhase::train, 6));
}

TEST(FaultInjection, DelayFiresEveryAttemptUnlessTimesLimitsIt) {
  st::FaultPlan every = st::FaultPlan::parse("rank=0,phase=eval,step=3,delay=1ms");
  for (int attempt = 0; attempt < 3; ++attempt) {
    ASSERT_TRUE(every.armed(0, st::FaultPhase::eval, 3)) << "attempt " << attempt;
    every.fire();
  }
  st::FaultPlan once = st::FaultPlan::parse("rank=0,phase=eval,step=3,delay=1ms,times=1");
  EXPECT_EQ(once.times, 1);
  ASSERT_TRUE(once.armed(0, st::FaultPhase::eval, 3));
  once.fire();
  EXPECT_FALSE(once.armed(0, st::FaultPhase::eval, 3));
  EXPECT_NE(once.describe().find("times=1"), std::string::npos) << once.describe();
}

TEST(FaultInjection, ThrowRaisesADataErrorAndDesyncOnlyLogs) {
  st::FaultPlan t = st::FaultPlan::parse("rank=1,phase=train,step=7,action=throw");
  EXPECT_EQ(t.action, st::FaultAction::fail);
  EXPECT_TRUE(t.armed(1, st::FaultPhase::train, 7));
  EXPECT_FALSE(t.armed(1, st::FaultPhase::train, 8));
  EXPECT_THROW(t.fire(), slimtrain::DataError);
  EXPECT_NE(t.describe().find("action=throw"), std::string::npos) << t.describe();

  st::FaultPlan d = st::FaultPlan::parse("rank=0,phase=train,step=3,action=desync,bytes=4096");
  EXPECT_EQ(d.action, st::FaultAction::desync);
  EXPECT_EQ(d.desync_bytes, 4096);
  EXPECT_TRUE(d.armed(0, st::FaultPhase::train, 3));
  EXPECT_NO_THROW(d.fire());  // the trainer issues the extra operation itself
  EXPECT_EQ(st::FaultPlan::parse("rank=0,phase=train,step=3,action=desync").desync_bytes, 4 << 20);
  EXPECT_NE(parse_error("rank=0,phase=eval,step=3,action=desync").find("needs phase=train"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=0,phase=train,step=3,action=desync,bytes=4").find("bytes='4'"),
            std::string::npos);

  st::FaultPlan nan = st::FaultPlan::parse("rank=1,phase=train,step=5,action=nan");
  EXPECT_EQ(nan.action, st::FaultAction::nan);
  EXPECT_TRUE(nan.armed(1, st::FaultPhase::train, 5));
  EXPECT_FALSE(nan.armed(1, st::FaultPhase::train, 6)) << "a NaN loss is one step's";
  EXPECT_NO_THROW(nan.fire());  // the trainer makes the loss NaN itself
  EXPECT_NE(nan.describe().find("action=nan"), std::string::npos) << nan.describe();
  EXPECT_NE(parse_error("rank=0,phase=eval,step=3,action=nan").find("needs phase=train"),
            std::string::npos);

  const st::FaultPlan p = st::FaultPlan::parse("rank=1,phase=prep,step=0,action=throw");
  EXPECT_TRUE(p.armed(1, st::FaultPhase::prep, 0));
  EXPECT_FALSE(p.armed(0, st::FaultPhase::prep, 0));
}

TEST(FaultInjection, BadSpecsNameTheVariableAndTheField) {
  EXPECT_NE(parse_error("rank=1,phase=eval,step=2,delay=8h").find("unknown unit"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=eval,step=2,delay=soon").find("delay 'soon'"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=-1,phase=eval,step=2,delay=1s").find("rank='-1'"), std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=test,step=2,delay=1s").find("phase='test'"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=train,step=2,action=crash").find("action='crash'"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=eval,step=2,delay=1s,when=now").find("unknown key 'when'"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=eval,delay=1s").find("needs rank=, phase= and step="),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=eval,step=2").find("needs delay="), std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=eval,step=2,delay=1s,times=0").find("times='0'"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=train,step=2,action=hang,times=1").find("applies to delays"),
            std::string::npos);
  EXPECT_NE(parse_error("rank=1,phase=eval,step=2,delay=1s,oops").find("not key=value"),
            std::string::npos);
  for (const std::string spec : {"rank=1,phase=eval,step=2,delay=8h", "rank=1,phase=eval"})
    EXPECT_NE(parse_error(spec).find("SLIMTRAIN_INJECT"), std::string::npos) << spec;
}

}  // namespace
