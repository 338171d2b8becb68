#pragma once
/** @brief IEEE binary16 and bfloat16 conversions (round to nearest even) for reductions. */
#include <cstdint>

namespace slimtrain::comm {

float half_to_float(std::uint16_t bits);
/** @brief Rounds to nearest even; overflow becomes infinity, NaN stays NaN. */
std::uint16_t float_to_half(float value);
float bf16_to_float(std::uint16_t bits);
/** @brief Rounds to nearest even; NaN stays NaN (quiet). */
std::uint16_t float_to_bf16(float value);

}  // namespace slimtrain::comm
