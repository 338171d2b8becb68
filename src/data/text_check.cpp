#include "slimtrain/data/text_check.hpp"

namespace slimtrain::data {

TextFlaws text_flaws(std::string_view text) {
  TextFlaws flaws;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c == 0) ++flaws.nul;
      ++i;
      continue;
    }
    // The sequence's length and the range its second byte may take (RFC 3629: no overlong
    // forms, no surrogates, nothing past U+10FFFF).
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    }
    bool ok = length > 0 && i + length <= n && p[i + 1] >= low && p[i + 1] <= high;
    for (std::size_t k = 2; ok && k < length; ++k) ok = (p[i + k] & 0xC0) == 0x80;
    if (ok) {
      i += length;
    } else {
      ++flaws.invalid_utf8;
      ++i;
    }
  }
  return flaws;
}

}  // namespace slimtrain::data
