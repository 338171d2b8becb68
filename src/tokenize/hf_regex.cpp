#include "slimtrain/tokenize/hf_regex.hpp"

#include <unicode/uregex.h>

#include <cctype>
#include <mutex>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

std::u16string utf16(const std::u32string& text) {
  std::u16string out;
  for (const char32_t c : text) {
    if (c < 0x10000) {
      out.push_back(static_cast<char16_t>(c));
    } else {
      out.push_back(static_cast<char16_t>(0xD7C0 + (c >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 | (c & 0x3FF)));
    }
  }
  return out;
}

// The tokenizers library's \s and \S are Unicode's White_Space; ICU's \s leaves out U+0085 and
// U+000B. Written as the property, both engines agree.
std::string unicode_spaces(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (next == 's' || next == 'S') {
        out += next == 's' ? "\\p{White_Space}" : "\\P{White_Space}";
        ++i;
        continue;
      }
      out += pattern.substr(i, 2);
      ++i;
      continue;
    }
    out.push_back(pattern[i]);
  }
  return out;
}

}  // namespace

struct Regex::Impl {
  URegularExpression* re = nullptr;
  std::mutex mutex;  // an ICU matcher holds its text: one match at a time
};

Regex::Regex(const std::string& pattern, const std::string& where)
    : impl_(std::make_unique<Impl>()) {
  const std::u16string p = utf16(decode_utf8(unicode_spaces(pattern)));
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse{};
  // Oniguruma's Ruby syntax, the library's: ^ and $ at every line, and only \n ends one (also
  // for what . leaves out).
  impl_->re = uregex_open(p.data(), static_cast<std::int32_t>(p.size()),
                          UREGEX_MULTILINE | UREGEX_UNIX_LINES, &parse, &status);
  if (U_FAILURE(status))
    SLIMTRAIN_THROW(ConfigError, where, ": the pattern ", pattern,
                    " is not a regular expression ICU reads (", u_errorName(status), " at offset ",
                    parse.offset, ")");
}

Regex::~Regex() {
  if (impl_ && impl_->re) uregex_close(impl_->re);
}

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(const std::u32string& text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  if (text.empty()) return out;
  const std::u16string t = utf16(text);
  // UTF-16 offsets back to code points.
  std::vector<std::size_t> point_of(t.size() + 1, 0);
  for (std::size_t i = 0, cp = 0; i <= t.size(); ++i) {
    point_of[i] = cp;
    if (i < t.size() && !(t[i] >= 0xD800 && t[i] < 0xDC00)) ++cp;
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  UErrorCode status = U_ZERO_ERROR;
  uregex_setText(impl_->re, t.data(), static_cast<std::int32_t>(t.size()), &status);
  while (U_SUCCESS(status) && uregex_findNext(impl_->re, &status)) {
    const std::int32_t begin = uregex_start(impl_->re, 0, &status);
    const std::int32_t end = uregex_end(impl_->re, 0, &status);
    if (U_FAILURE(status)) break;
    out.emplace_back(point_of[static_cast<std::size_t>(begin)],
                     point_of[static_cast<std::size_t>(end)]);
  }
  uregex_setText(impl_->re, u"", 0, &status);  // forget the text before it goes
  return out;
}

std::string quote_regex(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80)
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

const std::string& gpt2_pattern() {
  static const std::string pattern =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  return pattern;
}

}  // namespace slimtrain::tokenize::hf
