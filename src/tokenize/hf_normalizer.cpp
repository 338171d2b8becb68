// The normalizers as the tokenizers library runs them (normalizers/*.rs): each rewrites the text a
// whole piece at a time; only what ids depend on is kept (no alignments but the first one's).
#include "slimtrain/tokenize/hf_normalizer.hpp"

#include <algorithm>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_precompiled.hpp"
#include "slimtrain/tokenize/hf_regex.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

using NormKind = Normalizer::Kind;

// `text` less the characters `keep` refuses; of those at the origin, the kept ones stay there.
template <typename Keep>
std::u32string filtered(const std::u32string& text, Keep keep, std::size_t& origin) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!keep(text[i])) continue;
    out.push_back(text[i]);
    if (i < origin) ++kept;
  }
  origin = kept;
  return out;
}

// Each character made into one or more by `make` (appending them); what the characters at the
// origin became is there.
template <typename Make>
std::u32string expanded(const std::u32string& text, Make make, std::size_t& origin) {
  std::u32string out;
  out.reserve(text.size() + 8);
  std::size_t made = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    make(text[i], out);
    if (i + 1 == origin) made = out.size();
  }
  origin = made;
  return out;
}

// A normalization form (or the Precompiled rules): what the characters at the origin make alone.
template <typename Form>
std::u32string formed(const std::u32string& text, Form form, std::size_t& origin) {
  std::u32string out = form(text);
  if (origin > 0)
    origin = std::min(out.size(), std::max<std::size_t>(1, form(text.substr(0, origin)).size()));
  return out;
}

std::u32string lower(const std::u32string& text, std::size_t& origin) {
  return expanded(
      text,
      [](char32_t c, std::u32string& out) {
        if (c < 0x80)
          out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
        else
          out += lowercase(c);
      },
      origin);
}

// BERT's: control characters dropped, whitespace made a space, CJK ideographs spaced apart,
// accents stripped (after NFD: nonspacing marks only), lowercased: in that order.
std::u32string bert_normalize(const Normalizer& n, std::u32string text, std::size_t& origin) {
  if (n.clean_text) {
    text = filtered(
        text, [](char32_t c) { return !(c == 0 || c == 0xFFFD || is_control(c)); }, origin);
    for (char32_t& c : text)
      if (is_whitespace(c)) c = ' ';
  }
  if (n.chinese)
    text = expanded(
        text,
        [](char32_t c, std::u32string& out) {
          if (!is_cjk(c)) {
            out.push_back(c);
            return;
          }
          out += U' ';
          out += c;
          out += U' ';
        },
        origin);
  if (n.strip_accents)
    text = filtered(
        formed(text, nfd, origin), [](char32_t c) { return !is_nonspacing_mark(c); }, origin);
  if (n.lowercase) text = lower(text, origin);
  return text;
}

// SentencePiece's NMT rules (Nmt): ASCII controls dropped, other spaces made a space.
std::u32string nmt(const std::u32string& text, std::size_t& origin) {
  std::u32string out = filtered(
      text,
      [](char32_t c) {
        return !((c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || c == 0x7F ||
                 c == 0x8F || c == 0x9F);
      },
      origin);
  for (char32_t& c : out)
    if (c == 0x9 || c == 0xA || c == 0xC || c == 0xD || c == 0x1680 ||
        (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF ||
        c == 0xFFFD)
      c = ' ';
  return out;
}

std::u32string stripped(const std::u32string& text, bool left, bool right, std::size_t& origin) {
  std::size_t begin = 0, end = text.size();
  while (left && begin < end && is_whitespace(text[begin])) ++begin;
  while (right && end > begin && is_whitespace(text[end - 1])) --end;
  origin = origin > begin ? std::min(origin, end) - begin : 0;
  return text.substr(begin, end - begin);
}

// Every match replaced. What replaces a match takes the alignment of its last character (of the
// one before it, for an empty match), so it stands at the origin when that character did.
std::u32string replaced(const std::u32string& text, const Regex& pattern,
                        const std::u32string& content, std::size_t& origin) {
  std::u32string out;
  std::size_t at = 0, leading = 0;
  bool counting = true;  // while everything so far stands at the origin
  auto add = [&](std::size_t n, bool here) {
    if (counting && here)
      leading += n;
    else if (n > 0)
      counting = false;
  };
  for (const auto& [begin, end] : pattern.find_all(text)) {
    for (std::size_t i = at; i < begin; ++i) add(1, i < origin);
    add(content.size(), end > begin ? end - 1 < origin : begin == 0 || begin - 1 < origin);
    out.append(text, at, begin - at);
    out += content;
    at = end;
  }
  for (std::size_t i = at; i < text.size(); ++i) add(1, i < origin);
  out.append(text, at, std::u32string::npos);
  origin = leading;
  return out;
}

// A Replace's pattern: {"Regex": ...} or {"String": ...} (a literal).
std::shared_ptr<const Regex> pattern_of(const nlohmann::json& j, const std::string& where) {
  const nlohmann::json pattern = j.value("pattern", nlohmann::json::object());
  if (pattern.contains("Regex") && pattern["Regex"].is_string())
    return std::make_shared<const Regex>(pattern["Regex"].get<std::string>(), where);
  if (pattern.contains("String") && pattern["String"].is_string())
    return std::make_shared<const Regex>(quote_regex(pattern["String"].get<std::string>()), where);
  SLIMTRAIN_THROW(ConfigError, where, ": a Replace normalizer without a pattern");
}

}  // namespace

std::u32string Normalizer::apply(std::u32string text, std::size_t& origin) const {
  switch (kind) {
    case NormKind::kNone:
      return text;
    case NormKind::kBert:
      return bert_normalize(*this, std::move(text), origin);
    case NormKind::kNfc:
      return formed(text, nfc, origin);
    case NormKind::kNfd:
      return formed(text, nfd, origin);
    case NormKind::kNfkc:
      return formed(text, nfkc, origin);
    case NormKind::kNfkd:
      return formed(text, nfkd, origin);
    case NormKind::kNmt:
      return nmt(text, origin);
    case NormKind::kLowercase:
      return lower(text, origin);
    case NormKind::kStrip:
      return stripped(text, strip_left, strip_right, origin);
    case NormKind::kStripAccents:  // every mark, Mn, Mc and Me, and no decomposition first
      return filtered(
          text, [](char32_t c) { return !is_mark(c); }, origin);
    case NormKind::kReplace:
      return replaced(text, *pattern, content, origin);
    case NormKind::kPrepend:
      if (text.empty()) return text;
      if (origin > 0) origin += content.size();  // aligned with the character they precede
      return content + text;
    case NormKind::kPrecompiled:
      return formed(
          text, [this](const std::u32string& t) { return precompiled->apply(t); }, origin);
    case NormKind::kByteLevel:
      return formed(text, byte_level, origin);
    case NormKind::kSequence:
      for (const Normalizer& step : steps) text = step.apply(std::move(text), origin);
      return text;
  }
  return text;
}

Normalizer parse_normalizer(const nlohmann::json& j, const std::string& where) {
  Normalizer n;
  if (j.is_null()) return n;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    SLIMTRAIN_THROW(ConfigError, where, ": the normalizer has no \"type\"");
  n.type = j["type"].get<std::string>();
  static const std::pair<const char*, NormKind> kinds[] = {
      {"BertNormalizer", NormKind::kBert},
      {"NFC", NormKind::kNfc},
      {"NFD", NormKind::kNfd},
      {"NFKC", NormKind::kNfkc},
      {"NFKD", NormKind::kNfkd},
      {"Nmt", NormKind::kNmt},
      {"Lowercase", NormKind::kLowercase},
      {"Strip", NormKind::kStrip},
      {"StripAccents", NormKind::kStripAccents},
      {"Replace", NormKind::kReplace},
      {"Prepend", NormKind::kPrepend},
      {"Precompiled", NormKind::kPrecompiled},
      {"ByteLevel", NormKind::kByteLevel},
      {"Sequence", NormKind::kSequence}};
  bool known = false;
  for (const auto& [name, kind] : kinds)
    if (n.type == name) {
      n.kind = kind;
      known = true;
    }
  if (!known)
    SLIMTRAIN_THROW(ConfigError, where, ": normalizer ", n.type,
                    " is not one the tokenizers library has (BertNormalizer, NFC, NFD, NFKC, NFKD, "
                    "Nmt, Lowercase, Strip, StripAccents, Replace, Prepend, Precompiled, "
                    "ByteLevel, Sequence)");
  switch (n.kind) {
    case NormKind::kBert:
      n.clean_text = j.value("clean_text", true);
      n.chinese = j.value("handle_chinese_chars", true);
      n.lowercase = j.value("lowercase", true);
      // strip_accents null: as lowercase says (BERT's uncased models strip, cased ones do not).
      n.strip_accents = j.contains("strip_accents") && j["strip_accents"].is_boolean()
                            ? j["strip_accents"].get<bool>()
                            : n.lowercase;
      break;
    case NormKind::kSequence:
      if (!j.contains("normalizers") || !j["normalizers"].is_array())
        SLIMTRAIN_THROW(ConfigError, where, ": a Sequence normalizer without \"normalizers\"");
      for (const auto& step : j["normalizers"]) n.steps.push_back(parse_normalizer(step, where));
      break;
    case NormKind::kPrecompiled:
      if (!j.contains("precompiled_charsmap") || !j["precompiled_charsmap"].is_string())
        SLIMTRAIN_THROW(ConfigError, where, ": a Precompiled normalizer without a charsmap");
      n.precompiled =
          std::make_shared<const Precompiled>(j["precompiled_charsmap"].get<std::string>(), where);
      break;
    case NormKind::kStrip:
      n.strip_left = j.value("strip_left", true);
      n.strip_right = j.value("strip_right", true);
      break;
    case NormKind::kReplace:
      n.pattern = pattern_of(j, where);
      n.content = decode_utf8(j.value("content", std::string()));
      break;
    case NormKind::kPrepend:
      if (!j.contains("prepend") || !j["prepend"].is_string())
        SLIMTRAIN_THROW(ConfigError, where, ": a Prepend normalizer without \"prepend\"");
      n.content = decode_utf8(j["prepend"].get<std::string>());
      break;
    default:
      break;
  }
  return n;
}

}  // namespace slimtrain::tokenize::hf
