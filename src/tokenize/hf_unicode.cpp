#include "slimtrain/tokenize/hf_unicode.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

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

const UNormalizer2* instance(const UNormalizer2* (*get)(UErrorCode*)) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* n = get(&status);
  if (U_FAILURE(status))
    SLIMTRAIN_THROW(Error, "ICU normaliser unavailable: ", u_errorName(status));
  return n;
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
  static const UNormalizer2* form = instance(unorm2_getNFDInstance);
  return normalize(form, text);
}

std::u32string nfc(const std::u32string& text) {
  static const UNormalizer2* form = instance(unorm2_getNFCInstance);
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

bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
      return true;
    default:
      return false;
  }
}

bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126))
    return true;
  return u_ispunct(static_cast<UChar32>(c));
}

bool is_nonspacing_mark(char32_t c) {
  return u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK;
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

}  // namespace slimtrain::tokenize::hf
