// The vocabulary every model reads, the WordPiece and WordLevel models (models/wordpiece,
// models/wordlevel), and which model a tokenizer.json's model section is.
#include "slimtrain/tokenize/hf_model.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {

void Model::read_vocab(const nlohmann::json& model, const std::string& where) {
  where_ = where;
  if (!model.contains("vocab") || !model["vocab"].is_object())
    SLIMTRAIN_THROW(ConfigError, where, ": the model has no \"vocab\" object");
  vocab_.reserve(model["vocab"].size());
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX)
      SLIMTRAIN_THROW(ConfigError, where, ": vocab entry \"", token, "\" has id ", id.dump());
    const auto value = id.get<std::int32_t>();
    vocab_[token] = value;
    if (value > max_id_) max_id_ = value;
  }
  size_ = static_cast<std::int64_t>(vocab_.size());
}

std::int64_t Model::id_of(const std::string& token) const {
  const auto found = vocab_.find(token);
  return found == vocab_.end() ? -1 : found->second;
}

std::int32_t Model::must_have(const std::string& token) const {
  const auto found = vocab_.find(token);
  if (found == vocab_.end())
    SLIMTRAIN_THROW(DataError, where_, ": the text needs the unknown token \"", token,
                    "\", which the vocab lacks (the tokenizers library fails on it too)");
  return found->second;
}

WordPiece::WordPiece(const nlohmann::json& model, const std::string& where) {
  read_vocab(model, where);
  if (model.contains("unk_token") && model["unk_token"].is_string())
    unk_ = model["unk_token"].get<std::string>();
  if (model.contains("continuing_subword_prefix") && model["continuing_subword_prefix"].is_string())
    prefix_ = model["continuing_subword_prefix"].get<std::string>();
  if (model.contains("max_input_chars_per_word") &&
      model["max_input_chars_per_word"].is_number_unsigned())
    max_chars_ = model["max_input_chars_per_word"].get<std::size_t>();
}

void WordPiece::tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
  if (word.size() > max_chars_) {
    ids.push_back(must_have(unk_));
    return;
  }
  // The word's UTF-8 and where each character begins, so candidates are byte ranges.
  const std::string bytes = encode_utf8(word);
  std::vector<std::size_t> at;
  at.reserve(word.size() + 1);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if ((static_cast<unsigned char>(bytes[i]) & 0xC0) != 0x80) at.push_back(i);
  at.push_back(bytes.size());
  const std::size_t before = ids.size();
  std::string candidate;
  for (std::size_t start = 0; start + 1 < at.size();) {
    std::size_t end = at.size() - 1;
    std::int32_t found = -1;
    for (; end > start; --end) {
      candidate.assign(start > 0 ? prefix_ : std::string());
      candidate.append(bytes, at[start], at[end] - at[start]);
      const auto hit = vocab_.find(candidate);
      if (hit != vocab_.end()) {
        found = hit->second;
        break;
      }
    }
    if (found < 0) {  // no piece fits: the whole word is unknown
      ids.resize(before);
      ids.push_back(must_have(unk_));
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

WordLevel::WordLevel(const nlohmann::json& model, const std::string& where) {
  read_vocab(model, where);
  if (model.contains("unk_token") && model["unk_token"].is_string())
    unk_ = model["unk_token"].get<std::string>();
}

void WordLevel::tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
  const auto found = vocab_.find(encode_utf8(word));
  ids.push_back(found != vocab_.end() ? found->second : must_have(unk_));
}

namespace {

bool has(const nlohmann::json& j, const char* key) {
  return j.contains(key);
}

// The library's order for a model section without a type: each tried in turn, the first whose
// fields it finds taken (WordPiece before WordLevel, whose fields are a subset of its).
std::string inferred_type(const nlohmann::json& m) {
  const bool map_vocab = has(m, "vocab") && m["vocab"].is_object();
  if (map_vocab && has(m, "merges")) return "BPE";
  if (map_vocab && has(m, "unk_token") && has(m, "continuing_subword_prefix") &&
      has(m, "max_input_chars_per_word"))
    return "WordPiece";
  if (map_vocab && has(m, "unk_token")) return "WordLevel";
  if (has(m, "vocab") && m["vocab"].is_array()) return "Unigram";
  return "";
}

}  // namespace

std::unique_ptr<Model> parse_model(const nlohmann::json& model, const std::string& where,
                                   std::string& type) {
  if (model.contains("type")) {
    if (!model["type"].is_string())
      SLIMTRAIN_THROW(ConfigError, where, ": the model's type ", model["type"].dump(),
                      " is not a string");
    type = model["type"].get<std::string>();
  } else {
    type = inferred_type(model);
    if (type.empty())
      SLIMTRAIN_THROW(ConfigError, where,
                      ": the model has no \"type\", and its fields are not "
                      "those of BPE (vocab, merges), WordPiece (vocab, unk_token, "
                      "continuing_subword_prefix, max_input_chars_per_word), WordLevel (vocab, "
                      "unk_token) or Unigram (a vocab list)");
  }
  if (type == "WordPiece") return std::make_unique<WordPiece>(model, where);
  if (type == "BPE") return std::make_unique<Bpe>(model, where);
  if (type == "Unigram") return std::make_unique<Unigram>(model, where);
  if (type == "WordLevel") return std::make_unique<WordLevel>(model, where);
  SLIMTRAIN_THROW(ConfigError, where, ": model ", type,
                  " is not one the tokenizers library has (BPE, WordPiece, WordLevel, Unigram)");
}

}  // namespace slimtrain::tokenize::hf
