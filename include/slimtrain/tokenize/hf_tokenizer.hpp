#pragma once
/**
 * @brief A HuggingFace tokenizer.json read and run natively: the same ids as the tokenizers
 * library, with every component it has (hf_normalizer.hpp, hf_pre_tokenizer.hpp, hf_model.hpp,
 * hf_added_tokens.hpp, hf_post_processor.hpp); a component it does not have is a ConfigError
 * naming it. The file's decoder is not run (nothing here turns ids back into text), nor its
 * truncation and padding sections (the caller's maximum length cuts, batches pad).
 */
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::tokenize {

class HfTokenizer {
 public:
  /** @brief Parses tokenizer.json's text; ConfigError naming `where` and the component. */
  static HfTokenizer parse(const std::string& json, const std::string& where);
  HfTokenizer(HfTokenizer&&) noexcept;
  HfTokenizer& operator=(HfTokenizer&&) noexcept;
  ~HfTokenizer();

  /** @brief The ids of one text without special tokens (encode(text, add_special_tokens=False)). */
  std::vector<std::int32_t> encode_plain(const std::string& text) const;
  /**
   * @brief The ids of one text or a pair with the post-processor's special tokens, cut to
   * `max_length` tokens in all (0: no limit) the longer text first; `full_length` is the length
   * before the cut. `types`, when given, is set to each token's type (type_ids of the
   * tokenizers library's Encoding).
   */
  std::vector<std::int32_t> encode(const std::vector<std::string>& texts, std::int64_t max_length,
                                   std::int64_t& full_length,
                                   std::vector<std::int32_t>* types = nullptr) const;
  /** @brief One past the largest token type the pair template gives. */
  std::int64_t type_count() const;
  /** @brief One past the largest id (vocabulary and added tokens). */
  std::int64_t vocab_size() const;
  /** @brief The id of [PAD], <pad> or the padding section's token; 0 when it has none. */
  std::int64_t pad_id() const;
  /** @brief Special tokens a pair template adds, so a pair needs no separator of its own. */
  bool joins_pairs() const;
  /** @brief "WordPiece, 30522 tokens, BertNormalizer, BertPreTokenizer, TemplateProcessing" */
  std::string describe() const;

 private:
  struct Impl;
  HfTokenizer();
  static HfTokenizer parse_json(const std::string& json, const std::string& where);
  std::unique_ptr<Impl> impl_;
};

/**
 * @brief The longest sample the model beside a tokenizer.json takes: tokenizer_config.json's
 * model_max_length, else what `positions` makes of the config.json beside it (the model
 * registry's answer: RoBERTa's max_position_embeddings less its offset, say); 0 when neither says
 * (transformers writes a huge model_max_length for "no limit"). `source` names the file and key
 * it came from.
 */
std::int64_t hf_default_max_length(
    const std::string& tokenizer_json, std::string& source,
    const std::function<std::int64_t(const nlohmann::json& config)>& positions);

/**
 * @brief Whether pairs get token_type_ids: the model beside a tokenizer.json reads token types,
 * config.json's type_vocab_size above 1 (BERT's 2; RoBERTa's 1, DistilBERT and decoders have
 * none), as transformers' tokenizer returns them for it. Logged either way (a warning when there
 * is no config.json to say); ConfigError when the pair template's `type_count` types do not fit.
 */
bool hf_pair_types(const std::string& tokenizer_json, std::int64_t type_count);

}  // namespace slimtrain::tokenize
