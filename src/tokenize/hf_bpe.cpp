// The byte-level BPE of GPT-2, RoBERTa and Qwen2 tokenizers: the regular expressions that split
// text into words (ICU's engine), the byte-to-character map, and merges by rank.
#include <unicode/uregex.h>

#include <array>
#include <mutex>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_steps.hpp"
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

// GPT-2's 256 bytes as printable characters: the printable ones as themselves, the rest (controls,
// space, 127-160, 173) as 256, 257, ... in order.
const std::array<char32_t, 256>& byte_map() {
  static const std::array<char32_t, 256> map = [] {
    std::array<char32_t, 256> m{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
      m[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return m;
  }();
  return map;
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
  impl_->re = uregex_open(p.data(), static_cast<std::int32_t>(p.size()), 0, &parse, &status);
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

const std::string& gpt2_pattern() {
  static const std::string pattern =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  return pattern;
}

std::u32string byte_level(const std::u32string& text) {
  std::u32string out;
  for (const char c : encode_utf8(text)) out.push_back(byte_map()[static_cast<unsigned char>(c)]);
  return out;
}

Bpe::Bpe(const nlohmann::json& model, const std::string& where) {
  read_vocab(model, where);
  if (!model.contains("merges") || !model["merges"].is_array())
    SLIMTRAIN_THROW(ConfigError, where, ": the BPE model has no \"merges\" list");
  std::int32_t rank = 0;
  for (const auto& m : model["merges"]) {
    std::string pair;
    if (m.is_string()) {
      pair = m.get<std::string>();  // "left right"
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      pair = m[0].get<std::string>() + " " + m[1].get<std::string>();
    } else {
      SLIMTRAIN_THROW(ConfigError, where, ": merge ", m.dump(), " is not \"a b\" or [a, b]");
    }
    ranks_.emplace(pair, rank++);
  }
  for (const char* option : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(option) && !model[option].is_null() && model[option] != "")
      SLIMTRAIN_THROW(ConfigError, where, ": BPE with ", option, " is not implemented");
  if (model.value("byte_fallback", false))
    SLIMTRAIN_THROW(ConfigError, where, ": BPE with byte_fallback is not implemented");
  if (model.contains("unk_token") && model["unk_token"].is_string())
    unk_ = static_cast<std::int32_t>(id_of(model["unk_token"].get<std::string>()));
  ignore_merges_ = model.value("ignore_merges", false);
}

void Bpe::tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
  const std::string whole = encode_utf8(word);
  if (ignore_merges_) {
    const std::int64_t id = id_of(whole);
    if (id >= 0) {
      ids.push_back(static_cast<std::int32_t>(id));
      return;
    }
  }
  std::vector<std::string> symbols;
  for (const char32_t c : word) symbols.push_back(encode_utf8(c));
  while (symbols.size() > 1) {
    std::size_t best = symbols.size();
    std::int32_t best_rank = INT32_MAX;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto found = ranks_.find(symbols[i] + " " + symbols[i + 1]);
      if (found != ranks_.end() && found->second < best_rank) {
        best_rank = found->second;
        best = i;
      }
    }
    if (best == symbols.size()) break;
    symbols[best] += symbols[best + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  for (const std::string& s : symbols) {
    const std::int64_t id = id_of(s);
    if (id >= 0)
      ids.push_back(static_cast<std::int32_t>(id));
    else if (unk_ >= 0)
      ids.push_back(unk_);
  }
}

}  // namespace slimtrain::tokenize::hf
