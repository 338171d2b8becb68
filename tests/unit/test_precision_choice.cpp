// --precision fp32|bf16|auto resolved for a model and a device (slimtrain/train/precision.hpp).
#include <gtest/gtest.h>

#include "slimtrain/core/error.hpp"
#include "slimtrain/train/precision.hpp"

using slimtrain::ConfigError;
using slimtrain::train::bf16_measurement;
using slimtrain::train::choose_precision;

TEST(PrecisionChoice, AutoTakesBf16WhereTheTableMeasuredItFasterOnANativeBf16Cpu) {
  for (const char* model : {"cnn-small", "cnn-bn", "mlp", "vit-tiny"}) {
    const auto* m = bf16_measurement(model);
    ASSERT_NE(m, nullptr) << model;
    const auto c = choose_precision("auto", model, "cpu", true);
    // Each built-in model's row: faster, and within 0.5 point of fp32's accuracy.
    const bool pays = m->speedup > 1.0 && m->accuracy >= -0.005;
    EXPECT_EQ(c.bf16(), pays) << model;
    EXPECT_NE(c.reason.find(std::string("--precision auto: ") + model + " measured"),
              std::string::npos)
        << c.reason;
  }
}

TEST(PrecisionChoice, AutoKeepsFp32WhereNothingWasMeasuredOrTheCpuEmulatesBf16) {
  const auto script = choose_precision("auto", "torchscript", "cpu", true);
  EXPECT_EQ(script.precision, "fp32");
  EXPECT_NE(script.reason.find("not measured for torchscript"), std::string::npos);
  const auto emulated = choose_precision("auto", "mlp", "cpu", false);
  EXPECT_EQ(emulated.precision, "fp32");
  EXPECT_NE(emulated.reason.find("no native bf16"), std::string::npos);
  const auto gpu = choose_precision("auto", "mlp", "cuda", false);
  EXPECT_EQ(gpu.precision, "fp32");
  EXPECT_NE(gpu.reason.find("GPUs"), std::string::npos);
}

TEST(PrecisionChoice, AnExplicitChoiceStandsAndBf16IsRefusedWhereItWouldBeEmulated) {
  EXPECT_EQ(choose_precision("fp32", "mlp", "cpu", true).precision, "fp32");
  EXPECT_TRUE(choose_precision("fp32", "mlp", "cpu", true).reason.empty());
  EXPECT_EQ(choose_precision("bf16", "torchscript", "cpu", true).precision, "bf16");
  EXPECT_EQ(choose_precision("bf16", "mlp", "cuda", false).precision, "bf16");
  try {
    choose_precision("bf16", "mlp", "cpu", false);
    FAIL() << "bf16 accepted on a CPU without native bf16";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--precision bf16: this CPU has no native bf16"),
              std::string::npos);
  }
}
