#include "slimtrain/train/precision.hpp"

#include "slimtrain/core/detail/fixed.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::train {
namespace {

// With AMX: bench/train/bf16.sh on an Intel Xeon with AVX-512, avx512_bf16 and AMX, 2 ranks x
// 1 thread, 2 epochs of Fashion-MNIST, 2 seeds, 2026-11-25. With avx512_bf16 alone, two CPUs,
// the lower figure kept where they disagree: the AVX-512 VM of docs/performance.md (cnn-small
// 0.76x, cnn-bn 0.87x, one rank) and an AMD EPYC of family 26 (bench/train/bf16.sh against fp32
// on OpenBLAS's AVX-512 kernels, 2026-11-25: cnn-small 1.03x, cnn-bn 1.21x, the mlp 1.53x,
// vit-tiny 1.46x; issue 33's earlier 1.24x and 1.67x for the mlp were against AVX2 kernels that
// the environment forced, the lower kept). The accuracy is bf16's rounding, the same on either
// kind. A HuggingFace checkpoint's row is its model_type's ("hf:bert"): all-MiniLM-L6-v2 (a 6-layer
// BERT) fine-tuned on the text demo's fortunes (bench/train/bf16.sh MODELS=hf-minilm, 1 epoch,
// 2 seeds, the same EPYC, 2026-11-28: 1.51x, accuracy +0.11 point; AMX not measured). A model
// pays when faster and at most 0.5 point less accurate.
constexpr Bf16Measurement kMeasured[] = {
    {"cnn-small", 1.139, 0.76, +0.0008}, {"cnn-bn", 1.779, 0.87, -0.0029},
    {"mlp", 1.833, 1.24, -0.0000},       {"vit-tiny", 1.268, 1.46, -0.0003},
    {"hf:bert", 0, 1.51, +0.0011},
};
constexpr double kAccuracyTolerance = 0.005;

}  // namespace

const Bf16Measurement* bf16_measurement(const std::string& model) {
  for (const Bf16Measurement& m : kMeasured)
    if (model == m.model) return &m;
  return nullptr;
}

PrecisionChoice choose_precision(const std::string& requested, const std::string& model,
                                 const std::string& device, Bf16Support cpu) {
  const bool on_cpu = device == "cpu";
  if (requested == "bf16" && on_cpu && cpu == Bf16Support::none)
    SLIMTRAIN_THROW(ConfigError,
                    "--precision bf16: this CPU has no native bf16 (neither avx512_bf16 nor "
                    "amx_bf16 in /proc/cpuinfo's flags), so LibTorch would emulate it, slower "
                    "than fp32; use --precision fp32");
  if (requested != "auto") return {requested, ""};
  if (!on_cpu) return {"fp32", "--precision auto: fp32 on GPUs, where bf16 has not been measured"};
  if (cpu == Bf16Support::none)
    return {"fp32", "--precision auto: this CPU has no native bf16 (avx512_bf16 or amx_bf16)"};
  const char* kind = cpu == Bf16Support::amx ? "with AMX" : "with avx512_bf16 and no AMX";
  const Bf16Measurement* m = bf16_measurement(model);
  const double speedup = m == nullptr              ? 0
                         : cpu == Bf16Support::amx ? m->amx_speedup
                                                   : m->avx512_speedup;
  if (speedup <= 0)
    return {"fp32", "--precision auto: bf16 not measured for " + model + " on a CPU " + kind +
                        " (bench/train/bf16.sh)"};
  const std::string figures =
      "measured " + detail::fixed(speedup, 2) + "x the samples/s in bf16, test accuracy " +
      detail::fixed(100 * m->accuracy, 2, true) + " points, on a CPU " + kind;
  if (speedup > 1.0 && m->accuracy >= -kAccuracyTolerance)
    return {"bf16", "--precision auto: " + model + " " + figures};
  return {"fp32", "--precision auto: " + model + " " + figures + ": not worth it"};
}

}  // namespace slimtrain::train
