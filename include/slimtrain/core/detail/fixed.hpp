#pragma once
#include <cstdio>
#include <string>

namespace slimtrain::detail {

/** @brief `value` with `decimals` digits after the point ("%.*f"); with `sign`, always signed. */
inline std::string fixed(double value, int decimals, bool sign = false) {
  char text[64];
  std::snprintf(text, sizeof text, sign ? "%+.*f" : "%.*f", decimals, value);
  return text;
}

}  // namespace slimtrain::detail
