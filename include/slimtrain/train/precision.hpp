#pragma once
/**
 * @brief --precision fp32|bf16|auto, resolved once at start-up into what the run computes in.
 *
 * bf16 on a CPU pays only where the CPU computes it natively, and then only for some models and
 * some CPUs: with AMX (amx_bf16) bench/train/bf16.sh measured every built-in model faster in
 * bf16 at equal accuracy; with avx512_bf16 alone cnn-small ran at 0.76x and cnn-bn at 0.87x of
 * fp32 (oneDNN 2.6's bf16 convolutions), the mlp at 1.24-1.67x. auto takes bf16 where the
 * measurement for the CPU's kind says it pays, fp32 everywhere else.
 */
#include <string>

namespace slimtrain::train {

/** @brief How a CPU computes bf16: emulated, with avx512_bf16, or with AMX tiles too. */
enum class Bf16Support { none, avx512, amx };

struct PrecisionChoice {
  std::string precision;  ///< "fp32" or "bf16": what the run computes in
  std::string reason;     ///< why, for --precision auto ("" when the user chose)
  bool bf16() const { return precision == "bf16"; }
};

/** @brief bf16's measured speed-up over fp32 for a built-in model, or a HuggingFace model_type
 * ("hf:bert"), on each kind of CPU. */
struct Bf16Measurement {
  const char* model;
  double amx_speedup;     ///< bf16 / fp32 samples/s with AMX; 0: not measured
  double avx512_speedup;  ///< the same with avx512_bf16 alone; 0: not measured
  double accuracy;        ///< bf16's test accuracy minus fp32's (equal steps, mean of seeds)
};

/** @brief The row for a built-in model or "hf:MODEL_TYPE", or nullptr (TorchScript models and
 * the other model_types are not measured). */
const Bf16Measurement* bf16_measurement(const std::string& model);

/**
 * @brief Resolves `requested` (fp32, bf16 or auto) for `model` on `device` ("cpu" or "cuda").
 * Throws ConfigError for bf16 on a CPU that would emulate it.
 */
PrecisionChoice choose_precision(const std::string& requested, const std::string& model,
                                 const std::string& device, Bf16Support cpu);

}  // namespace slimtrain::train
