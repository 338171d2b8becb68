#include "slimtrain/tokenize/hf_precompiled.hpp"

#include <unicode/ubrk.h>

#include <memory>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

std::string from_base64(const std::string& text, const std::string& where) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  std::size_t end = text.size();
  while (end > 0 && text[end - 1] == '=') --end;
  for (std::size_t i = 0; i < end; ++i) {
    const int v = value(text[i]);
    if (v < 0)
      SLIMTRAIN_THROW(ConfigError, where, ": the Precompiled normalizer's charsmap is not base64");
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

// Darts-clone's unit layout, as SentencePiece writes it.
bool has_leaf(std::uint32_t unit) {
  return ((unit >> 8) & 1) == 1;
}
std::uint32_t value_of(std::uint32_t unit) {
  return unit & ((1u << 31) - 1);
}
std::uint32_t label_of(std::uint32_t unit) {
  return unit & ((1u << 31) | 0xFF);
}
std::uint32_t offset_of(std::uint32_t unit) {
  return (unit >> 10) << ((unit & (1u << 9)) >> 6);
}

struct BreakCloser {
  void operator()(UBreakIterator* it) const { ubrk_close(it); }
};

}  // namespace

Precompiled::Precompiled(const std::string& base64, const std::string& where) : where_(where) {
  const std::string bytes = from_base64(base64, where);
  auto u32_at = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  if (bytes.size() < 4)
    SLIMTRAIN_THROW(ConfigError, where, ": the Precompiled normalizer's charsmap is empty");
  const std::uint32_t trie_bytes = u32_at(0);
  if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > bytes.size() - 4)
    SLIMTRAIN_THROW(ConfigError, where,
                    ": the Precompiled normalizer's charsmap declares a trie of ", trie_bytes,
                    " bytes in ", bytes.size() - 4);
  for (std::size_t at = 4; at < 4 + trie_bytes; at += 4) trie_.push_back(u32_at(at));
  pool_ = bytes.substr(4 + trie_bytes);
}

bool Precompiled::transform(const std::string& chunk, std::string& out) const {
  // The first key met on the way down is the shortest prefix: its replacement is taken.
  std::size_t node = offset_of(trie_[0]);
  for (const char byte : chunk) {
    const auto c = static_cast<unsigned char>(byte);
    if (c == 0) return false;
    node ^= c;
    if (node >= trie_.size()) return false;
    const std::uint32_t unit = trie_[node];
    if (label_of(unit) != c) return false;
    node ^= offset_of(unit);
    if (node >= trie_.size()) return false;
    if (has_leaf(unit)) {
      const std::size_t begin = value_of(trie_[node]);
      if (begin > pool_.size())
        SLIMTRAIN_THROW(ConfigError, where_, ": the Precompiled normalizer's charsmap points past ",
                        "its replacements");
      const std::size_t end = pool_.find('\0', begin);
      out = pool_.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
      return true;
    }
  }
  return false;
}

std::u32string Precompiled::apply(const std::u32string& text) const {
  // Extended grapheme clusters from ICU, over UTF-16.
  std::u16string utf16;
  std::vector<std::size_t> code_point_at;  // UTF-16 index -> code point index
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    code_point_at.push_back(i);
    if (c >= 0x10000) {
      utf16.push_back(static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10)));
      utf16.push_back(static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
      code_point_at.push_back(i);
    } else {
      utf16.push_back(static_cast<char16_t>(c));
    }
  }
  code_point_at.push_back(text.size());
  UErrorCode status = U_ZERO_ERROR;
  // One iterator per thread, given each text: opening one loads ICU's rules (most of the time).
  thread_local std::unique_ptr<UBreakIterator, BreakCloser> it(
      ubrk_open(UBRK_CHARACTER, "", nullptr, 0, &status));
  if (it)
    ubrk_setText(it.get(), reinterpret_cast<const UChar*>(utf16.data()),
                 static_cast<std::int32_t>(utf16.size()), &status);
  if (!it || U_FAILURE(status))
    SLIMTRAIN_THROW(Error, "ICU: cannot segment text into graphemes: ", u_errorName(status));
  std::u32string out;
  std::string replacement;
  std::int32_t start = ubrk_first(it.get());
  for (std::int32_t end = ubrk_next(it.get()); end != UBRK_DONE;
       start = end, end = ubrk_next(it.get())) {
    const std::u32string grapheme = text.substr(code_point_at[static_cast<std::size_t>(start)],
                                                code_point_at[static_cast<std::size_t>(end)] -
                                                    code_point_at[static_cast<std::size_t>(start)]);
    const std::string bytes = encode_utf8(grapheme);
    // The library's rule: a grapheme under 6 bytes is looked up whole; else (or when it is not
    // found) each of its characters alone.
    if (bytes.size() < 6 && transform(bytes, replacement)) {
      out += decode_utf8(replacement);
      continue;
    }
    for (const char32_t c : grapheme) {
      if (transform(encode_utf8(c), replacement))
        out += decode_utf8(replacement);
      else
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace slimtrain::tokenize::hf
