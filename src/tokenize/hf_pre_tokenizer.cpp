// The pre-tokenizers as the tokenizers library runs them (pre_tokenizers/*.rs). Most find spans
// of the text (a character class, a regex's matches) and keep or merge them as a
// SplitDelimiterBehavior says (tokenizer/normalizer.rs's split); the pieces left empty are dropped.
#include "slimtrain/tokenize/hf_pre_tokenizer.hpp"

#include <algorithm>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_regex.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

using PreKind = PreTokenizer::Kind;

// A stretch of a piece's text, [begin, end), and whether it is what the split cuts at.
struct Span {
  std::size_t begin, end;
  bool match;
};
using Spans = std::vector<Span>;

// Each character `is` takes its own span; the runs between them are one span each.
template <typename Is>
Spans char_spans(const std::u32string& text, Is is) {
  Spans spans;
  std::size_t run = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is(text[i])) continue;
    if (run < i) spans.push_back({run, i, false});
    spans.push_back({i, i + 1, true});
    run = i + 1;
  }
  if (run < text.size()) spans.push_back({run, text.size(), false});
  return spans;
}

Spans regex_spans(const std::u32string& text, const Regex& re, bool invert) {
  Spans spans;
  std::size_t at = 0;
  for (const auto& [begin, end] : re.find_all(text)) {
    if (at != begin) spans.push_back({at, begin, invert});
    spans.push_back({begin, end, !invert});
    at = end;
  }
  if (at != text.size()) spans.push_back({at, text.size(), invert});
  return spans;
}

// The spans a behavior keeps, merged as it merges them.
Spans arrange(const Spans& spans, Behavior behavior) {
  Spans out;
  bool previous = false;
  switch (behavior) {
    case Behavior::kIsolated:
      return spans;
    case Behavior::kRemoved:
      for (const Span& s : spans)
        if (!s.match) out.push_back(s);
      return out;
    case Behavior::kContiguous:  // runs of matches, and of the rest, each one piece
      for (const Span& s : spans) {
        if (s.match == previous && !out.empty())
          out.back().end = s.end;
        else
          out.push_back(s);
        previous = s.match;
      }
      return out;
    case Behavior::kMergedWithPrevious:  // a match joins the text before it
      for (const Span& s : spans) {
        if (s.match && !previous && !out.empty())
          out.back().end = s.end;
        else
          out.push_back(s);
        previous = s.match;
      }
      return out;
    case Behavior::kMergedWithNext:  // a match joins the text after it
      for (auto s = spans.rbegin(); s != spans.rend(); ++s) {
        if (s->match && !previous && !out.empty())
          out.back().begin = s->begin;
        else
          out.push_back(*s);
        previous = s->match;
      }
      std::reverse(out.begin(), out.end());
      return out;
  }
  return out;
}

void emit(Piece& piece, const Spans& spans, Behavior behavior, Pieces& out) {
  for (const Span& s : arrange(spans, behavior)) {
    if (s.end <= s.begin) continue;
    Piece p;
    p.text = piece.text.substr(s.begin, s.end - s.begin);
    p.origin = s.begin < piece.origin ? std::min(piece.origin, s.end) - s.begin : 0;
    out.push_back(std::move(p));
  }
}

// \w+|[^\w\s]+ (Rust's regex, Unicode classes): runs of word characters and runs of the rest,
// whitespace between them dropped.
void whitespace(Piece& piece, Pieces& out) {
  Spans spans;
  int kind = -1;  // 0 space, 1 word, 2 other
  for (std::size_t i = 0; i < piece.text.size(); ++i) {
    const char32_t c = piece.text[i];
    const int k = is_whitespace(c) ? 0 : is_word_character(c) ? 1 : 2;
    if (k == kind && !spans.empty())
      spans.back().end = i + 1;
    else
      spans.push_back({i, i + 1, k == 0});
    kind = k;
  }
  emit(piece, spans, Behavior::kRemoved, out);
}

// Cut before each character of another script than the last one that had a script; characters
// of no script ("any") before the first that has one are dropped, as the library drops them.
void unicode_scripts(Piece& piece, Pieces& out) {
  std::vector<std::size_t> cuts;
  bool seen = false;
  int last = -1;
  for (std::size_t i = 0; i < piece.text.size(); ++i) {
    const int script = unigram_script(piece.text[i]);
    if (script < 0) continue;
    if (!seen || script != last) cuts.push_back(i);
    seen = true;
    last = script;
  }
  cuts.push_back(piece.text.size());
  Spans spans;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) spans.push_back({cuts[i], cuts[i + 1], false});
  emit(piece, spans, Behavior::kIsolated, out);
}

void metaspace(const PreTokenizer& p, Piece& piece, Pieces& out) {
  std::replace(piece.text.begin(), piece.text.end(), U' ', p.replacement);
  const bool prepend = p.prepend == PreTokenizer::Prepend::kAlways ||
                       (p.prepend == PreTokenizer::Prepend::kFirst && piece.origin > 0);
  if (prepend && piece.text[0] != p.replacement) {
    piece.text.insert(piece.text.begin(), p.replacement);
    if (piece.origin > 0) ++piece.origin;  // aligned with the character it stands before
  }
  if (!p.split) {
    out.push_back(std::move(piece));
    return;
  }
  const char32_t r = p.replacement;
  emit(piece, char_spans(piece.text, [r](char32_t c) { return c == r; }), Behavior::kMergedWithNext,
       out);
}

void byte_level(const PreTokenizer& p, Piece& piece, Pieces& out) {
  if (p.add_prefix_space && piece.text[0] != U' ') {
    piece.text.insert(piece.text.begin(), U' ');
    if (piece.origin > 0) ++piece.origin;
  }
  const std::size_t first = out.size();
  if (p.regex)
    emit(piece, regex_spans(piece.text, *p.regex, false), Behavior::kIsolated, out);
  else
    out.push_back(std::move(piece));
  for (std::size_t i = first; i < out.size(); ++i) {
    Piece& q = out[i];
    if (q.origin > 0) q.origin = hf::byte_level(q.text.substr(0, q.origin)).size();
    q.text = hf::byte_level(q.text);
  }
}

void cut(const PreTokenizer& p, Piece& piece, Pieces& out) {
  switch (p.kind) {
    case PreKind::kBert: {
      Pieces words;
      emit(piece, char_spans(piece.text, is_whitespace), Behavior::kRemoved, words);
      for (Piece& w : words) emit(w, char_spans(w.text, is_punctuation), Behavior::kIsolated, out);
      return;
    }
    case PreKind::kWhitespaceSplit:
      return emit(piece, char_spans(piece.text, is_whitespace), Behavior::kRemoved, out);
    case PreKind::kWhitespace:
      return whitespace(piece, out);
    case PreKind::kPunctuation:
      return emit(piece, char_spans(piece.text, is_punctuation), p.behavior, out);
    case PreKind::kDigits:
      return emit(piece, char_spans(piece.text, is_numeric),
                  p.individual_digits ? Behavior::kIsolated : Behavior::kContiguous, out);
    case PreKind::kSplit:
      return emit(piece, regex_spans(piece.text, *p.regex, p.invert), p.behavior, out);
    case PreKind::kCharDelimiter: {
      const char32_t d = p.replacement;
      return emit(piece, char_spans(piece.text, [d](char32_t c) { return c == d; }),
                  Behavior::kRemoved, out);
    }
    case PreKind::kMetaspace:
      return metaspace(p, piece, out);
    case PreKind::kByteLevel:
      return byte_level(p, piece, out);
    case PreKind::kUnicodeScripts:
      return unicode_scripts(piece, out);
    case PreKind::kFixedLength: {
      Spans spans;
      for (std::size_t at = 0; at < piece.text.size(); at += p.length)
        spans.push_back({at, std::min(at + p.length, piece.text.size()), false});
      return emit(piece, spans, Behavior::kIsolated, out);
    }
    case PreKind::kNone:
    case PreKind::kSequence:
      break;
  }
  out.push_back(std::move(piece));
}

}  // namespace

void PreTokenizer::apply(Pieces& pieces) const {
  if (kind == PreKind::kNone) return;
  if (kind == PreKind::kSequence) {
    for (const PreTokenizer& step : steps) step.apply(pieces);
    return;
  }
  Pieces out;
  out.reserve(pieces.size() * 2);
  for (Piece& piece : pieces) {
    if (piece.token >= 0)
      out.push_back(std::move(piece));
    else if (!piece.text.empty())
      cut(*this, piece, out);
  }
  pieces = std::move(out);
}

bool PreTokenizer::prepends_first() const {
  for (const PreTokenizer& step : steps)
    if (step.prepends_first()) return true;
  return kind == PreKind::kMetaspace && prepend == Prepend::kFirst;
}

namespace {

Behavior behavior_of(const nlohmann::json& j, const std::string& where, const std::string& type) {
  const std::string name = j.value("behavior", std::string("Isolated"));
  static const std::pair<const char*, Behavior> names[] = {
      {"Removed", Behavior::kRemoved},
      {"Isolated", Behavior::kIsolated},
      {"MergedWithPrevious", Behavior::kMergedWithPrevious},
      {"MergedWithNext", Behavior::kMergedWithNext},
      {"Contiguous", Behavior::kContiguous}};
  for (const auto& [n, b] : names)
    if (name == n) return b;
  SLIMTRAIN_THROW(ConfigError, where, ": ", type, " with behavior ", name,
                  " is not one the tokenizers library has (Removed, Isolated, MergedWithPrevious, "
                  "MergedWithNext, Contiguous)");
}

char32_t one_character(const nlohmann::json& j, const char* key, const std::string& fallback,
                       const std::string& where, const std::string& type) {
  const std::u32string c = decode_utf8(j.value(key, fallback));
  if (c.size() != 1)
    SLIMTRAIN_THROW(ConfigError, where, ": ", type, "'s ", key, " is not one character");
  return c[0];
}

void parse_metaspace(PreTokenizer& p, const nlohmann::json& j, const std::string& where) {
  p.replacement = one_character(j, "replacement", "\u2581", where, p.type);
  p.split = j.value("split", true);
  const std::string scheme = j.value("prepend_scheme", std::string("always"));
  if (scheme == "always")
    p.prepend = PreTokenizer::Prepend::kAlways;
  else if (scheme == "first")
    p.prepend = PreTokenizer::Prepend::kFirst;
  else if (scheme == "never")
    p.prepend = PreTokenizer::Prepend::kNever;
  else
    SLIMTRAIN_THROW(ConfigError, where, ": Metaspace with prepend_scheme ", scheme,
                    " is not one the tokenizers library has (always, first, never)");
  // The older add_prefix_space: false means never; with another scheme the library refuses it.
  if (j.contains("add_prefix_space") && j["add_prefix_space"] == false) {
    if (p.prepend != PreTokenizer::Prepend::kNever)
      SLIMTRAIN_THROW(ConfigError, where, ": Metaspace's add_prefix_space false contradicts its ",
                      "prepend_scheme ", scheme, " (the tokenizers library refuses it too)");
  }
}

}  // namespace

PreTokenizer parse_pre_tokenizer(const nlohmann::json& j, const std::string& where) {
  PreTokenizer p;
  if (j.is_null()) return p;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    SLIMTRAIN_THROW(ConfigError, where, ": the pre_tokenizer has no \"type\"");
  p.type = j["type"].get<std::string>();
  static const std::pair<const char*, PreKind> kinds[] = {
      {"BertPreTokenizer", PreKind::kBert},
      {"ByteLevel", PreKind::kByteLevel},
      {"Whitespace", PreKind::kWhitespace},
      {"WhitespaceSplit", PreKind::kWhitespaceSplit},
      {"Punctuation", PreKind::kPunctuation},
      {"Digits", PreKind::kDigits},
      {"Split", PreKind::kSplit},
      {"Metaspace", PreKind::kMetaspace},
      {"CharDelimiterSplit", PreKind::kCharDelimiter},
      {"UnicodeScripts", PreKind::kUnicodeScripts},
      {"FixedLength", PreKind::kFixedLength},
      {"Sequence", PreKind::kSequence}};
  bool known = false;
  for (const auto& [name, kind] : kinds)
    if (p.type == name) {
      p.kind = kind;
      known = true;
    }
  if (!known)
    SLIMTRAIN_THROW(ConfigError, where, ": pre_tokenizer ", p.type,
                    " is not one the tokenizers library has (BertPreTokenizer, ByteLevel, "
                    "Whitespace, WhitespaceSplit, Punctuation, Digits, Split, Metaspace, "
                    "CharDelimiterSplit, UnicodeScripts, FixedLength, Sequence)");
  switch (p.kind) {
    case PreKind::kSequence:
      if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
        SLIMTRAIN_THROW(ConfigError, where, ": a Sequence pre_tokenizer without \"pretokenizers\"");
      for (const auto& step : j["pretokenizers"])
        p.steps.push_back(parse_pre_tokenizer(step, where));
      break;
    case PreKind::kSplit: {
      const nlohmann::json pattern = j.value("pattern", nlohmann::json::object());
      if (pattern.contains("Regex") && pattern["Regex"].is_string())
        p.regex = std::make_shared<const Regex>(pattern["Regex"].get<std::string>(), where);
      else if (pattern.contains("String") && pattern["String"].is_string())
        p.regex =
            std::make_shared<const Regex>(quote_regex(pattern["String"].get<std::string>()), where);
      else
        SLIMTRAIN_THROW(ConfigError, where, ": a Split pre_tokenizer without a pattern");
      p.behavior = behavior_of(j, where, p.type);
      p.invert = j.value("invert", false);
      break;
    }
    case PreKind::kPunctuation:
      p.behavior = behavior_of(j, where, p.type);
      break;
    case PreKind::kDigits:
      p.individual_digits = j.value("individual_digits", false);
      break;
    case PreKind::kMetaspace:
      parse_metaspace(p, j, where);
      break;
    case PreKind::kCharDelimiter:
      p.replacement = one_character(j, "delimiter", "", where, p.type);
      break;
    case PreKind::kFixedLength:
      if (!j.value("length", nlohmann::json(5)).is_number_unsigned() ||
          j.value("length", std::size_t{5}) == 0)
        SLIMTRAIN_THROW(ConfigError, where, ": FixedLength's length is not a positive integer");
      p.length = j.value("length", std::size_t{5});
      break;
    case PreKind::kByteLevel:
      p.add_prefix_space = j.value("add_prefix_space", true);
      if (j.value("use_regex", true))
        p.regex = std::make_shared<const Regex>(gpt2_pattern(), where);
      break;
    default:
      break;
  }
  return p;
}

}  // namespace slimtrain::tokenize::hf
