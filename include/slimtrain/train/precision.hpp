#pragma once
/**
 * @brief --precision fp32|bf16|auto, resolved once at start-up into what the run computes in.
 *
 * bf16 on a CPU pays only where the CPU computes it natively (avx512_bf16 or amx_bf16; elsewhere
 * LibTorch emulates it, 0.76x for cnn-small on an AVX-512 Xeon without it) and only for some
 * models: auto takes bf16 for the built-in models that bench/train/bf16.sh measured faster in it
 * at equal test accuracy (within 0.5 point) on such a CPU, fp32 for everything else.
 */
#include <string>

namespace slimtrain::train {

struct PrecisionChoice {
  std::string precision;  ///< "fp32" or "bf16": what the run computes in
  std::string reason;     ///< why, for --precision auto ("" when the user chose)
  bool bf16() const { return precision == "bf16"; }
};

/** @brief The measured speed-up of bf16 over fp32 for a built-in model, or 0: not measured. */
struct Bf16Measurement {
  const char* model;
  double speedup;   ///< bf16 / fp32 samples/s, median of bench/train/bf16.sh's seeds
  double accuracy;  ///< bf16's test accuracy minus fp32's (mean over the seeds)
};

/** @brief bench/train/bf16.sh's rows on a CPU with native bf16, as the binary carries them. */
const Bf16Measurement* bf16_measurement(const std::string& model);

/**
 * @brief Resolves `requested` (fp32, bf16 or auto) for `model` on `device` ("cpu" or "cuda").
 * Throws ConfigError for bf16 on a CPU without native bf16.
 */
PrecisionChoice choose_precision(const std::string& requested, const std::string& model,
                                 const std::string& device, bool native_bf16);

}  // namespace slimtrain::train
