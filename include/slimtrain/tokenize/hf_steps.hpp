#pragma once
/**
 * @brief The steps of a HuggingFace tokenizer (hf_tokenizer.hpp): normalizers, pre-tokenizers
 * and the models (WordPiece here, BPE and Unigram in their own files), each built from its
 * tokenizer.json section.
 */
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace slimtrain::tokenize::hf {

class Precompiled;
class Regex;

/** @brief A normalizer, or a Sequence of them (steps). */
struct Normalizer {
  /// "" (none), BertNormalizer, NFC, NFD, Lowercase, StripAccents, Precompiled, Strip, Replace,
  /// Sequence
  std::string type;
  bool clean_text = true, chinese = true, strip_accents = false, lowercase = true;
  bool strip_left = false, strip_right = false;  ///< Strip
  std::shared_ptr<const Regex> pattern;          ///< Replace: what is replaced ...
  std::u32string content;                        ///< ... by this
  std::shared_ptr<const Precompiled> precompiled;
  std::vector<Normalizer> steps;
  std::u32string apply(std::u32string text) const;
};
/** @brief ConfigError naming `where` and the type for one not implemented. */
Normalizer parse_normalizer(const nlohmann::json& j, const std::string& where);

/** @brief A pre-tokenizer, or a Sequence of them: splits text into words. */
struct PreTokenizer {
  /// "" (none), BertPreTokenizer, WhitespaceSplit, Whitespace, Split, ByteLevel, Metaspace,
  /// Sequence
  std::string type;
  std::vector<PreTokenizer> steps;
  std::shared_ptr<const Regex> regex;  ///< Split's pattern; ByteLevel's with use_regex
  bool remove_matches = false;         ///< Split: behavior Removed (else Isolated)
  bool add_prefix_space = false;       ///< ByteLevel; Metaspace's prepend_scheme always
  char32_t replacement = U'\u2581';    ///< Metaspace: what a space becomes
  bool split = true;                   ///< Metaspace: a word begins at each replacement
  std::vector<std::u32string> apply(std::vector<std::u32string> words) const;
};
PreTokenizer parse_pre_tokenizer(const nlohmann::json& j, const std::string& where);

/** @brief A tokenizer model: a word to ids. */
class Model {
 public:
  virtual ~Model() = default;
  virtual void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const = 0;
  std::int64_t max_id() const { return max_id_; }
  /** @brief The id of `token`, or -1. */
  std::int64_t id_of(const std::string& token) const;

 protected:
  /** @brief The model's "vocab" object; ConfigError naming `where` for a bad entry. */
  void read_vocab(const nlohmann::json& model, const std::string& where);
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::int64_t max_id_ = -1;
};

/** @brief WordPiece: each word as its longest pieces from the left, or the unknown token. */
class WordPiece final : public Model {
 public:
  WordPiece(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  std::int32_t unk_ = -1;
  std::string prefix_ = "##";
  std::size_t max_chars_ = 100;
};

/**
 * @brief BPE: a word's characters merged pair by pair, the pair of lowest rank (the leftmost of
 * equals) first, until no merge applies (hf_bpe.cpp). With ignore_merges a word in the vocab is
 * taken whole.
 */
class Bpe final : public Model {
 public:
  Bpe(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  std::unordered_map<std::string, std::int32_t> ranks_;  // "left right" -> rank
  std::int32_t unk_ = -1;
  bool ignore_merges_ = false;
};

/**
 * @brief Unigram (SentencePiece's): the word's segmentation into vocabulary pieces of the highest
 * total score (Viterbi over its bytes), a character no piece covers being the unknown piece at
 * the lowest score less 10, runs of them fused; with byte_fallback an unknown piece becomes its
 * bytes' <0xXX> pieces (hf_unigram.cpp).
 */
class Unigram final : public Model {
 public:
  Unigram(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  std::vector<double> scores_;  // by id
  std::size_t longest_ = 0;     // bytes of the longest piece
  double min_score_ = 0.0;
  std::int32_t unk_ = -1;
  bool byte_fallback_ = false;
  std::string where_;
};

/** @brief A regular expression as the tokenizers library's (ICU's engine, \\s as Unicode's). */
class Regex {
 public:
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  /** @brief The [begin, end) code-point ranges of the matches in `text`, left to right. */
  std::vector<std::pair<std::size_t, std::size_t>> find_all(const std::u32string& text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/** @brief GPT-2's split (ByteLevel's use_regex). */
const std::string& gpt2_pattern();
/** @brief `text`'s UTF-8 bytes as GPT-2's printable characters, one per byte. */
std::u32string byte_level(const std::u32string& text);

}  // namespace slimtrain::tokenize::hf
