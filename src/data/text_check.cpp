#include "slimtrain/data/text_check.hpp"

#include <algorithm>
#include <cstdio>

namespace slimtrain::data {
namespace {

// The length of the valid UTF-8 sequence at p[i] (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF), or 0 where none starts.
std::size_t sequence_length(const unsigned char* p, std::size_t i, std::size_t n) {
  const unsigned char c = p[i];
  if (c < 0x80) return 1;
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
  return ok ? length : 0;
}

}  // namespace

TextFlaws text_flaws(std::string_view text) {
  TextFlaws flaws;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const std::size_t length = sequence_length(p, i, n);
    if (length == 0) {
      ++flaws.invalid_utf8;
      ++i;
      continue;
    }
    if (p[i] == 0) ++flaws.nul;
    i += length;
  }
  return flaws;
}

namespace {

// `text` with each byte `replace` wants (given the length of the valid sequence it starts, 0 for
// none) written as `replace` says, the rest copied.
template <typename Replace>
std::string rewritten(std::string_view text, Replace&& replace) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::string out;
  for (std::size_t i = 0; i < n;) {
    const std::size_t length = sequence_length(p, i, n);
    if (replace(p[i], length, out)) {
      ++i;
      continue;
    }
    const std::size_t kept = std::max<std::size_t>(length, 1);  // a lone byte kept as it is
    out.append(text.substr(i, kept));
    i += kept;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text) {
  return rewritten(text, [](unsigned char c, std::size_t length, std::string& out) {
    if (length != 0 && !(length == 1 && (c < 0x20 || c == 0x7F) && c != '\t')) return false;
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(c));
    out += escaped;
    return true;
  });
}

std::string without_flaws(std::string_view text) {
  return rewritten(text, [](unsigned char c, std::size_t length, std::string& out) {
    if (length != 0 && c != 0) return false;
    out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    return true;
  });
}

}  // namespace slimtrain::data
