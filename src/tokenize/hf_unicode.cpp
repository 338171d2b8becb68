#include "slimtrain/tokenize/hf_unicode.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/uset.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <array>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace slimtrain::tokenize::hf {
namespace {

std::u16string to_utf16(const std::u32string& text) {
  std::u16string out;
  out.reserve(text.size());
  for (const char32_t c : text) {
    if (c < 0x10000) {
      out.push_back(static_cast<char16_t>(c));
    } else {
      out.push_back(static_cast<char16_t>(U16_LEAD(c)));
      out.push_back(static_cast<char16_t>(U16_TRAIL(c)));
    }
  }
  return out;
}

std::u32string from_utf16(const char16_t* s, std::int32_t length) {
  std::u32string out;
  out.reserve(static_cast<std::size_t>(length));
  for (std::int32_t i = 0; i < length;) {
    UChar32 c;
    U16_NEXT(s, i, length, c);
    out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

std::u32string normalize(const UNormalizer2* form, const std::u32string& text) {
  const std::u16string in = to_utf16(text);
  std::vector<char16_t> out(in.size() * 3 + 16);
  UErrorCode status = U_ZERO_ERROR;
  std::int32_t n = unorm2_normalize(form, in.data(), static_cast<std::int32_t>(in.size()),
                                    out.data(), static_cast<std::int32_t>(out.size()), &status);
  if (status == U_BUFFER_OVERFLOW_ERROR) {
    out.resize(static_cast<std::size_t>(n));
    status = U_ZERO_ERROR;
    n = unorm2_normalize(form, in.data(), static_cast<std::int32_t>(in.size()), out.data(), n,
                         &status);
  }
  if (U_FAILURE(status)) SLIMTRAIN_THROW(Error, "ICU normalisation failed: ", u_errorName(status));
  return from_utf16(out.data(), n);
}

// The library's normalization tables are Unicode 9.0's (unicode-normalization-alignments): a
// character assigned later has no decomposition and combining class 0 there. ICU's normalizer
// filtered to the characters of 9.0 does the same (as IDNA filters to 3.2).
const UNormalizer2* of_unicode_9(const UNormalizer2* (*get)(UErrorCode*)) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* full = get(&status);
  USet* set = uset_openPattern(u"[:age=9.0:]", -1, &status);
  const UNormalizer2* filtered = unorm2_openFiltered(full, set, &status);
  if (U_FAILURE(status))
    SLIMTRAIN_THROW(Error, "ICU normaliser unavailable: ", u_errorName(status));
  return filtered;  // kept for the process, with its set
}

// Whether `c` was assigned by Unicode `major`.0 (unassigned characters are of age 0.0).
bool assigned_by(char32_t c, std::uint8_t major) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] <= major;
}

std::uint32_t category_mask(char32_t c) {
  return U_GET_GC_MASK(static_cast<UChar32>(c));
}

}  // namespace

std::u32string decode_utf8(const std::string& text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const std::uint8_t*>(text.data());
  const auto length = static_cast<std::int32_t>(text.size());
  for (std::int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    out.push_back(c < 0 ? U'\uFFFD' : static_cast<char32_t>(c));
  }
  return out;
}

std::string encode_utf8(char32_t c) {
  std::uint8_t bytes[4];
  std::int32_t n = 0;
  UBool error = false;
  U8_APPEND(bytes, n, 4, static_cast<UChar32>(c), error);
  if (error) return "\xEF\xBF\xBD";
  return std::string(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(n));
}

std::string encode_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) {
    if (c < 0x80)
      out.push_back(static_cast<char>(c));
    else
      out += encode_utf8(c);
  }
  return out;
}

std::u32string nfd(const std::u32string& text) {
  static const UNormalizer2* form = of_unicode_9(unorm2_getNFDInstance);
  return normalize(form, text);
}

std::u32string nfc(const std::u32string& text) {
  static const UNormalizer2* form = of_unicode_9(unorm2_getNFCInstance);
  return normalize(form, text);
}

std::u32string nfkd(const std::u32string& text) {
  static const UNormalizer2* form = of_unicode_9(unorm2_getNFKDInstance);
  return normalize(form, text);
}

std::u32string nfkc(const std::u32string& text) {
  static const UNormalizer2* form = of_unicode_9(unorm2_getNFKCInstance);
  return normalize(form, text);
}

std::u32string lowercase(char32_t c) {
  if (c < 0x80) return std::u32string(1, (c >= 'A' && c <= 'Z') ? c + 32 : c);
  const std::u16string in = to_utf16(std::u32string(1, c));
  char16_t out[8];
  UErrorCode status = U_ZERO_ERROR;
  // The root locale, one character alone: no final-sigma context, as Rust's char::to_lowercase.
  const std::int32_t n =
      u_strToLower(out, 8, in.data(), static_cast<std::int32_t>(in.size()), "", &status);
  if (U_FAILURE(status)) return std::u32string(1, c);
  return from_utf16(out, n);
}

bool is_whitespace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\r' || c == ' ' ||
         u_isUWhiteSpace(static_cast<UChar32>(c));
}

// The next three are the unicode_categories crate's, whose tables are Unicode 8.0's: characters
// assigned later are none of them there, and a few have changed category since.
bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return (category_mask(c) & (U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK | U_GC_CS_MASK)) != 0 &&
         assigned_by(c, 8);
}

bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126))
    return true;
  if (c < 0x80) return false;
  if (c == 0x166D || c == 0x111C9) return true;  // Po in 8.0
  return (category_mask(c) & U_GC_P_MASK) != 0 && assigned_by(c, 8);
}

bool is_nonspacing_mark(char32_t c) {
  if (c < 0x300) return false;
  if (c == 0x1734) return true;                                                 // Mn in 8.0
  if (c == 0x1885 || c == 0x1886 || c == 0xA9BD || c == 0x111C9) return false;  // not yet Mn
  return (category_mask(c) & U_GC_MN_MASK) != 0 && assigned_by(c, 8);
}

// unicode-normalization-alignments' is_combining_mark: Unicode 9.0's marks.
bool is_mark(char32_t c) {
  if (c < 0x300) return false;
  if (c == 0x1CF2 || c == 0x1CF3) return true;  // Mc in 9.0
  if (c == 0x111C9) return false;               // Po in 9.0
  return (category_mask(c) & U_GC_M_MASK) != 0 && assigned_by(c, 9);
}

bool is_numeric(char32_t c) {
  return (category_mask(c) & U_GC_N_MASK) != 0;
}

bool is_word_character(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(u, UCHAR_ALPHABETIC) || u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL))
    return true;
  switch (u_charType(u)) {
    case U_DECIMAL_DIGIT_NUMBER:
    case U_NON_SPACING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_CONNECTOR_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int unigram_script(char32_t c) {
  if (c == ' ') return -1;
  if (c == 0x30FC) return USCRIPT_HAN;
  // Four characters whose script changed after the library's table was made.
  if (c == 0x953 || c == 0x954) return USCRIPT_DEVANAGARI;
  if (c == 0x589 || c == 0x61C) return USCRIPT_COMMON;
  if (!assigned_by(c, 9)) return -1;
  UErrorCode status = U_ZERO_ERROR;
  const UScriptCode script = uscript_getScript(static_cast<UChar32>(c), &status);
  if (U_FAILURE(status) || script == USCRIPT_UNKNOWN) return -1;
  if (script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA) return USCRIPT_HAN;
  return static_cast<int>(script);
}

// GPT-2's 256 bytes as printable characters: the printable ones as themselves, the rest (controls,
// space, 127-160, 173) as 256, 257, ... in order.
std::u32string byte_level(const std::u32string& text) {
  static const std::array<char32_t, 256> map = [] {
    std::array<char32_t, 256> m{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
      m[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return m;
  }();
  std::u32string out;
  for (const char c : encode_utf8(text)) out.push_back(map[static_cast<unsigned char>(c)]);
  return out;
}

}  // namespace slimtrain::tokenize::hf
