#include "slimtrain/train/precision.hpp"

#include <cstdio>
#include <iterator>

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {
namespace {

// bench/train/bf16.sh on an Intel Xeon with AVX-512 and AMX (avx512_bf16, amx_bf16), 2 ranks x
// 1 thread, 2 epochs of Fashion-MNIST, 2 seeds, 2026-11-25 (docs/performance.md has the table).
// A model pays when it is faster and its accuracy is no more than 0.5 point lower. Issue 33's
// EPYC (avx512_bf16 without AMX) measured bf16 faster too: cnn-small 1.09x, the mlp 1.24-1.67x.
constexpr Bf16Measurement kMeasured[] = {
    {"cnn-small", 1.139, +0.0008},
    {"cnn-bn", 1.779, -0.0029},
    {"mlp", 1.833, -0.0000},
    {"vit-tiny", 1.268, -0.0001},
};
constexpr double kAccuracyTolerance = 0.005;

bool pays(const Bf16Measurement& m) {
  return m.speedup > 1.0 && m.accuracy >= -kAccuracyTolerance;
}

std::string fixed(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

const Bf16Measurement* bf16_measurement(const std::string& model) {
  for (const Bf16Measurement& m : kMeasured)
    if (model == m.model) return &m;
  return nullptr;
}

PrecisionChoice choose_precision(const std::string& requested, const std::string& model,
                                 const std::string& device, bool native_bf16) {
  const bool cpu = device == "cpu";
  if (requested == "bf16" && cpu && !native_bf16)
    SLIMTRAIN_THROW(ConfigError,
                    "--precision bf16: this CPU has no native bf16 (neither avx512_bf16 nor "
                    "amx_bf16 in /proc/cpuinfo's flags), so LibTorch would emulate it, slower "
                    "than fp32; train with --precision fp32 (or auto)");
  if (requested != "auto") return {requested, ""};
  if (!cpu) return {"fp32", "--precision auto: fp32 on GPUs, where bf16 has not been measured yet"};
  if (!native_bf16)
    return {"fp32", "--precision auto: this CPU has no native bf16 (avx512_bf16 or amx_bf16)"};
  const Bf16Measurement* m = bf16_measurement(model);
  if (m == nullptr)
    return {"fp32", "--precision auto: bf16 not measured for " + model + " (bench/train/bf16.sh)"};
  const std::string figures = fixed(m->speedup, "%.2f") + "x the samples/s, test accuracy " +
                              fixed(100 * m->accuracy, "%+.2f") + " points";
  if (pays(*m))
    return {"bf16", "--precision auto: " + model + " measured " + figures +
                        " in bf16 on a CPU with native bf16"};
  return {"fp32", "--precision auto: " + model + " measured " + figures + " in bf16, not worth it"};
}

}  // namespace slimtrain::train
