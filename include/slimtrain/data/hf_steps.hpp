#pragma once
/**
 * @brief The steps of a HuggingFace tokenizer (hf_tokenizer.hpp): normalizers, pre-tokenizers
 * and the WordPiece model, each built from its tokenizer.json section.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace slimtrain::data::hf {

/** @brief A normalizer, or a Sequence of them (steps). */
struct Normalizer {
  std::string type;  ///< "" (none), BertNormalizer, NFC, NFD, Lowercase, StripAccents, Sequence
  bool clean_text = true, chinese = true, strip_accents = false, lowercase = true;
  std::vector<Normalizer> steps;
  std::u32string apply(std::u32string text) const;
};
/** @brief ConfigError naming `where` and the type for one not implemented. */
Normalizer parse_normalizer(const nlohmann::json& j, const std::string& where);

/** @brief A pre-tokenizer, or a Sequence of them: splits text into words. */
struct PreTokenizer {
  std::string type;  ///< "" (none), BertPreTokenizer, WhitespaceSplit, Whitespace, Sequence
  std::vector<PreTokenizer> steps;
  std::vector<std::u32string> apply(std::vector<std::u32string> words) const;
};
PreTokenizer parse_pre_tokenizer(const nlohmann::json& j, const std::string& where);

/** @brief WordPiece: each word as its longest pieces from the left, or the unknown token. */
class WordPiece {
 public:
  WordPiece(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const;
  std::int64_t size() const { return static_cast<std::int64_t>(vocab_.size()); }
  std::int64_t max_id() const { return max_id_; }
  /** @brief The id of `token`, or -1. */
  std::int64_t id_of(const std::string& token) const;

 private:
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::int32_t unk_ = -1;
  std::string prefix_ = "##";
  std::size_t max_chars_ = 100;
  std::int64_t max_id_ = -1;
};

}  // namespace slimtrain::data::hf
