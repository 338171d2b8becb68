#include "slimtrain/tokenize/hf_steps.hpp"

#include <algorithm>
#include <cctype>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_precompiled.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

std::string type_of(const nlohmann::json& j, const std::string& where, const char* section) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    SLIMTRAIN_THROW(ConfigError, where, ": the ", section, " has no \"type\"");
  return j["type"].get<std::string>();
}

std::u32string without_accents(const std::u32string& text) {
  std::u32string out;
  for (const char32_t c : nfd(text))
    if (!is_nonspacing_mark(c)) out.push_back(c);
  return out;
}

std::u32string lower(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (const char32_t c : text) out += lowercase(c);
  return out;
}

// BERT's: control characters dropped, whitespace made a space, CJK ideographs spaced apart,
// accents stripped (after NFD), lowercased: in that order, as the tokenizers library does.
std::u32string bert_normalize(const Normalizer& n, const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (const char32_t c : text) {
    if (n.clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) {
        out.push_back(' ');
        continue;
      }
    }
    if (n.chinese && is_cjk(c)) {
      out.push_back(' ');
      out.push_back(c);
      out.push_back(' ');
      continue;
    }
    out.push_back(c);
  }
  if (n.strip_accents) out = without_accents(out);
  if (n.lowercase) out = lower(out);
  return out;
}

// Splits every word at whitespace (dropped) and, for BERT's, around each punctuation character.
std::vector<std::u32string> split_words(const std::vector<std::u32string>& words, bool punctuation,
                                        bool word_classes) {
  std::vector<std::u32string> out;
  for (const std::u32string& word : words) {
    std::u32string current;
    int current_class = -1;  // Whitespace: runs of \w and of other non-space characters
    auto flush = [&] {
      if (!current.empty()) out.push_back(current);
      current.clear();
    };
    for (const char32_t c : word) {
      if (is_whitespace(c)) {
        flush();
        continue;
      }
      if (punctuation && is_punctuation(c)) {
        flush();
        out.push_back(std::u32string(1, c));
        continue;
      }
      if (word_classes) {
        const int cls = is_word_character(c) ? 1 : 0;
        if (cls != current_class) flush();
        current_class = cls;
      }
      current.push_back(c);
    }
    flush();
  }
  return out;
}

// Each word cut at the regex's matches: the matches and the text between them, in order (Split's
// Isolated), or the text between them alone (Removed).
std::vector<std::u32string> split_regex(const std::vector<std::u32string>& words, const Regex& re,
                                        bool remove_matches) {
  std::vector<std::u32string> out;
  for (const std::u32string& word : words) {
    std::size_t at = 0;
    for (const auto& [begin, end] : re.find_all(word)) {
      if (begin > at) out.push_back(word.substr(at, begin - at));
      if (!remove_matches && end > begin) out.push_back(word.substr(begin, end - begin));
      at = end;
    }
    if (at < word.size()) out.push_back(word.substr(at));
  }
  return out;
}

// A literal string as a pattern: every character that is not a letter or digit escaped.
std::string quote_regex(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80)
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::u32string stripped(const std::u32string& text, bool left, bool right) {
  std::size_t begin = 0, end = text.size();
  while (left && begin < end && is_whitespace(text[begin])) ++begin;
  while (right && end > begin && is_whitespace(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

std::u32string replaced(const std::u32string& text, const Regex& pattern,
                        const std::u32string& content) {
  std::u32string out;
  std::size_t at = 0;
  for (const auto& [begin, end] : pattern.find_all(text)) {
    out.append(text, at, begin - at);
    out += content;
    at = end;
  }
  out.append(text, at, std::u32string::npos);
  return out;
}

// Metaspace: spaces become the replacement, which also begins the text (prepend_scheme always)
// and, with split, every word: "▁hello▁▁world" is "▁hello", "▁", "▁world".
std::vector<std::u32string> metaspace(const PreTokenizer& p, std::vector<std::u32string> words) {
  std::vector<std::u32string> out;
  for (std::u32string& w : words) {
    std::replace(w.begin(), w.end(), U' ', p.replacement);
    if (p.add_prefix_space && !w.empty() && w[0] != p.replacement)
      w.insert(w.begin(), p.replacement);
    if (!p.split) {
      out.push_back(std::move(w));
      continue;
    }
    std::size_t begin = 0;
    for (std::size_t i = 1; i <= w.size(); ++i)
      if (i == w.size() || w[i] == p.replacement) {
        out.push_back(w.substr(begin, i - begin));
        begin = i;
      }
  }
  return out;
}

// A Split's or Replace's pattern: {"Regex": ...} or {"String": ...} (a literal).
std::shared_ptr<const Regex> pattern_of(const nlohmann::json& j, const std::string& where,
                                        const char* what) {
  const nlohmann::json pattern = j.value("pattern", nlohmann::json::object());
  if (pattern.contains("Regex") && pattern["Regex"].is_string())
    return std::make_shared<const Regex>(pattern["Regex"].get<std::string>(), where);
  if (pattern.contains("String") && pattern["String"].is_string())
    return std::make_shared<const Regex>(quote_regex(pattern["String"].get<std::string>()), where);
  SLIMTRAIN_THROW(ConfigError, where, ": a ", what, " without a pattern");
}

}  // namespace

std::u32string Normalizer::apply(std::u32string text) const {
  if (type.empty()) return text;
  if (type == "Precompiled") return precompiled->apply(text);
  if (type == "Strip") return stripped(text, strip_left, strip_right);
  if (type == "Replace") return replaced(text, *pattern, content);
  if (type == "BertNormalizer") return bert_normalize(*this, text);
  if (type == "NFC") return nfc(text);
  if (type == "NFD") return nfd(text);
  if (type == "Lowercase") return lower(text);
  if (type == "StripAccents") return without_accents(text);
  for (const Normalizer& step : steps) text = step.apply(std::move(text));  // Sequence
  return text;
}

Normalizer parse_normalizer(const nlohmann::json& j, const std::string& where) {
  Normalizer n;
  if (j.is_null()) return n;
  n.type = type_of(j, where, "normalizer");
  if (n.type == "BertNormalizer") {
    n.clean_text = j.value("clean_text", true);
    n.chinese = j.value("handle_chinese_chars", true);
    n.lowercase = j.value("lowercase", true);
    // strip_accents null: as lowercase says (BERT's uncased models strip, cased ones do not).
    n.strip_accents = j.contains("strip_accents") && j["strip_accents"].is_boolean()
                          ? j["strip_accents"].get<bool>()
                          : n.lowercase;
  } else if (n.type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      SLIMTRAIN_THROW(ConfigError, where, ": a Sequence normalizer without \"normalizers\"");
    for (const auto& step : j["normalizers"]) n.steps.push_back(parse_normalizer(step, where));
  } else if (n.type == "Precompiled") {
    if (!j.contains("precompiled_charsmap") || !j["precompiled_charsmap"].is_string())
      SLIMTRAIN_THROW(ConfigError, where, ": a Precompiled normalizer without a charsmap");
    n.precompiled =
        std::make_shared<const Precompiled>(j["precompiled_charsmap"].get<std::string>(), where);
  } else if (n.type == "Strip") {
    n.strip_left = j.value("strip_left", true);
    n.strip_right = j.value("strip_right", true);
  } else if (n.type == "Replace") {
    n.pattern = pattern_of(j, where, "Replace normalizer");
    n.content = decode_utf8(j.value("content", std::string()));
  } else if (n.type != "NFC" && n.type != "NFD" && n.type != "Lowercase" &&
             n.type != "StripAccents") {
    SLIMTRAIN_THROW(ConfigError, where, ": normalizer ", n.type,
                    " is not implemented (BertNormalizer, NFC, NFD, Lowercase, StripAccents, "
                    "Precompiled, Strip, Replace, Sequence)");
  }
  return n;
}

std::vector<std::u32string> PreTokenizer::apply(std::vector<std::u32string> words) const {
  if (type.empty()) return words;
  if (type == "BertPreTokenizer") return split_words(words, true, false);
  if (type == "WhitespaceSplit") return split_words(words, false, false);
  if (type == "Whitespace") return split_words(words, false, true);
  if (type == "Split") return split_regex(words, *regex, remove_matches);
  if (type == "Metaspace") return metaspace(*this, std::move(words));
  if (type == "ByteLevel") {
    // Each piece the earlier steps made gets its own space, as the library prefixes each split.
    if (add_prefix_space)
      for (std::u32string& w : words)
        if (!w.empty() && w[0] != ' ') w.insert(w.begin(), U' ');
    if (regex) words = split_regex(words, *regex, false);
    for (std::u32string& w : words) w = byte_level(w);
    return words;
  }
  for (const PreTokenizer& step : steps) words = step.apply(std::move(words));  // Sequence
  return words;
}

PreTokenizer parse_pre_tokenizer(const nlohmann::json& j, const std::string& where) {
  PreTokenizer p;
  if (j.is_null()) return p;
  p.type = type_of(j, where, "pre_tokenizer");
  if (p.type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
      SLIMTRAIN_THROW(ConfigError, where, ": a Sequence pre_tokenizer without \"pretokenizers\"");
    for (const auto& step : j["pretokenizers"]) p.steps.push_back(parse_pre_tokenizer(step, where));
  } else if (p.type == "Split") {
    p.regex = pattern_of(j, where, "Split pre_tokenizer");
    const std::string behavior = j.value("behavior", std::string("Isolated"));
    if ((behavior != "Isolated" && behavior != "Removed") || j.value("invert", false))
      SLIMTRAIN_THROW(ConfigError, where, ": Split with behavior ", behavior,
                      j.value("invert", false) ? " inverted" : "",
                      " is not implemented (Isolated, Removed)");
    p.remove_matches = behavior == "Removed";
  } else if (p.type == "Metaspace") {
    const std::u32string replacement = decode_utf8(j.value("replacement", std::string("\u2581")));
    if (replacement.size() != 1)
      SLIMTRAIN_THROW(ConfigError, where, ": Metaspace's replacement is not one character");
    p.replacement = replacement[0];
    p.split = j.value("split", true);
    // prepend_scheme "first" prepends only at the text's first character; the words here do
    // not carry where they began, so it is refused rather than guessed.
    const std::string scheme = j.value(
        "prepend_scheme", std::string(j.value("add_prefix_space", true) ? "always" : "never"));
    if (scheme != "always" && scheme != "never")
      SLIMTRAIN_THROW(ConfigError, where, ": Metaspace with prepend_scheme ", scheme,
                      " is not implemented (always, never)");
    p.add_prefix_space = scheme == "always";
  } else if (p.type == "ByteLevel") {
    p.add_prefix_space = j.value("add_prefix_space", true);
    if (j.value("use_regex", true)) p.regex = std::make_shared<const Regex>(gpt2_pattern(), where);
  } else if (p.type != "BertPreTokenizer" && p.type != "WhitespaceSplit" &&
             p.type != "Whitespace") {
    SLIMTRAIN_THROW(ConfigError, where, ": pre_tokenizer ", p.type,
                    " is not implemented (BertPreTokenizer, WhitespaceSplit, Whitespace, Split, "
                    "ByteLevel, Metaspace, Sequence)");
  }
  return p;
}

void Model::read_vocab(const nlohmann::json& model, const std::string& where) {
  if (!model.contains("vocab") || !model["vocab"].is_object())
    SLIMTRAIN_THROW(ConfigError, where, ": the model has no \"vocab\" object");
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX)
      SLIMTRAIN_THROW(ConfigError, where, ": vocab entry \"", token, "\" has id ", id.dump());
    const auto value = id.get<std::int32_t>();
    vocab_[token] = value;
    if (value > max_id_) max_id_ = value;
  }
}

std::int64_t Model::id_of(const std::string& token) const {
  const auto found = vocab_.find(token);
  return found == vocab_.end() ? -1 : found->second;
}

WordPiece::WordPiece(const nlohmann::json& model, const std::string& where) {
  read_vocab(model, where);
  const std::string unk = model.value("unk_token", std::string("[UNK]"));
  const auto found = vocab_.find(unk);
  if (found == vocab_.end())
    SLIMTRAIN_THROW(ConfigError, where, ": the unknown token \"", unk, "\" is not in the vocab");
  unk_ = found->second;
  if (model.contains("continuing_subword_prefix") && model["continuing_subword_prefix"].is_string())
    prefix_ = model["continuing_subword_prefix"].get<std::string>();
  if (model.contains("max_input_chars_per_word") &&
      model["max_input_chars_per_word"].is_number_unsigned())
    max_chars_ = model["max_input_chars_per_word"].get<std::size_t>();
}

void WordPiece::tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
  if (word.size() > max_chars_) {
    ids.push_back(unk_);
    return;
  }
  const std::size_t before = ids.size();
  std::size_t start = 0;
  while (start < word.size()) {
    std::size_t end = word.size();
    std::int32_t found = -1;
    while (start < end) {
      std::string piece = encode_utf8(word.substr(start, end - start));
      if (start > 0) piece = prefix_ + piece;
      const auto at = vocab_.find(piece);
      if (at != vocab_.end()) {
        found = at->second;
        break;
      }
      --end;
    }
    if (found < 0) {  // no piece fits: the whole word is unknown
      ids.resize(before);
      ids.push_back(unk_);
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

}  // namespace slimtrain::tokenize::hf
