// --precision fp32|bf16|auto resolved for a model and a device (slimtrain/train/precision.hpp).
#include <gtest/gtest.h>

#include "slimtrain/core/error.hpp"
#include "slimtrain/train/precision.hpp"

using slimtrain::ConfigError;
using slimtrain::train::bf16_measurement;
using slimtrain::train::Bf16Support;
using slimtrain::train::choose_precision;

TEST(PrecisionChoice, AutoFollowsTheMeasurementForTheCpusKind) {
  for (const char* model : {"cnn-small", "cnn-bn", "mlp", "vit-tiny"}) {
    const auto* m = bf16_measurement(model);
    ASSERT_NE(m, nullptr) << model;
    for (const Bf16Support cpu : {Bf16Support::amx, Bf16Support::avx512}) {
      const double speedup = cpu == Bf16Support::amx ? m->amx_speedup : m->avx512_speedup;
      const auto c = choose_precision("auto", model, "cpu", cpu);
      // Faster, and within 0.5 point of fp32's accuracy; unmeasured stays fp32.
      EXPECT_EQ(c.bf16(), speedup > 1.0 && m->accuracy >= -0.005) << model << " " << c.reason;
      EXPECT_NE(c.reason.find("--precision auto: "), std::string::npos) << c.reason;
    }
  }
  // The measured rows: every model pays with AMX; without it, cnn-small and cnn-bn ran slower on
  // one of the two CPUs measured, the mlp and vit-tiny faster on both.
  EXPECT_TRUE(choose_precision("auto", "vit-tiny", "cpu", Bf16Support::amx).bf16());
  EXPECT_FALSE(choose_precision("auto", "cnn-small", "cpu", Bf16Support::avx512).bf16());
  EXPECT_FALSE(choose_precision("auto", "cnn-bn", "cpu", Bf16Support::avx512).bf16());
  EXPECT_TRUE(choose_precision("auto", "mlp", "cpu", Bf16Support::avx512).bf16());
  const auto vit = choose_precision("auto", "vit-tiny", "cpu", Bf16Support::avx512);
  EXPECT_TRUE(vit.bf16());
  EXPECT_NE(vit.reason.find("measured 1.46x the samples/s in bf16"), std::string::npos)
      << vit.reason;
  // A HuggingFace checkpoint by its model_type: BERT measured (all-MiniLM-L6-v2, 1.51x) with
  // avx512_bf16 only; with AMX, and other model_types, not measured.
  const auto bert = choose_precision("auto", "hf:bert", "cpu", Bf16Support::avx512);
  EXPECT_TRUE(bert.bf16()) << bert.reason;
  EXPECT_NE(bert.reason.find("hf:bert measured 1.51x"), std::string::npos) << bert.reason;
  EXPECT_FALSE(choose_precision("auto", "hf:bert", "cpu", Bf16Support::amx).bf16());
  const auto qwen2 = choose_precision("auto", "hf:qwen2", "cpu", Bf16Support::avx512);
  EXPECT_FALSE(qwen2.bf16());
  EXPECT_NE(qwen2.reason.find("not measured for hf:qwen2"), std::string::npos) << qwen2.reason;
  const auto unknown = choose_precision("auto", "text-bow", "cpu", Bf16Support::avx512);
  EXPECT_FALSE(unknown.bf16());
  EXPECT_NE(unknown.reason.find("not measured for text-bow"), std::string::npos) << unknown.reason;
}

TEST(PrecisionChoice, AutoKeepsFp32WhereNothingWasMeasuredOrTheCpuEmulatesBf16) {
  const auto script = choose_precision("auto", "torchscript", "cpu", Bf16Support::amx);
  EXPECT_EQ(script.precision, "fp32");
  EXPECT_NE(script.reason.find("not measured for torchscript"), std::string::npos);
  const auto emulated = choose_precision("auto", "mlp", "cpu", Bf16Support::none);
  EXPECT_EQ(emulated.precision, "fp32");
  EXPECT_NE(emulated.reason.find("no native bf16"), std::string::npos);
  const auto gpu = choose_precision("auto", "mlp", "cuda", Bf16Support::none);
  EXPECT_EQ(gpu.precision, "fp32");
  EXPECT_NE(gpu.reason.find("GPUs"), std::string::npos);
}

TEST(PrecisionChoice, AnExplicitChoiceStandsAndBf16IsRefusedWhereItWouldBeEmulated) {
  EXPECT_EQ(choose_precision("fp32", "mlp", "cpu", Bf16Support::amx).precision, "fp32");
  EXPECT_TRUE(choose_precision("fp32", "mlp", "cpu", Bf16Support::amx).reason.empty());
  EXPECT_EQ(choose_precision("bf16", "torchscript", "cpu", Bf16Support::avx512).precision, "bf16");
  EXPECT_EQ(choose_precision("bf16", "mlp", "cuda", Bf16Support::none).precision, "bf16");
  try {
    choose_precision("bf16", "mlp", "cpu", Bf16Support::none);
    FAIL() << "bf16 accepted on a CPU without native bf16";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--precision bf16: this CPU has no native bf16"),
              std::string::npos);
  }
}
