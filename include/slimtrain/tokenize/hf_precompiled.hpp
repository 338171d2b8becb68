#pragma once
/**
 * @brief The Precompiled normalizer of a HuggingFace tokenizer.json: SentencePiece's own
 * normalization rules (nmt_nfkc and the like), as a converted SentencePiece model carries them
 * (XLM-RoBERTa's, T5's, ALBERT's). The charsmap is a double-array trie of UTF-8 keys whose values
 * are offsets into a pool of NUL-terminated replacements; the text is rewritten grapheme by
 * grapheme as the tokenizers library does (spm_precompiled), quirks included.
 */
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::tokenize::hf {

class Precompiled {
 public:
  /** @brief From the tokenizer.json's base64 `precompiled_charsmap`; ConfigError naming `where`
   * when it is not base64 or not a charsmap. */
  Precompiled(const std::string& base64, const std::string& where);
  std::u32string apply(const std::u32string& text) const;

 private:
  /** @brief The replacement of the shortest key `chunk` begins with; false when none does. */
  bool transform(const std::string& chunk, std::string& out) const;
  std::vector<std::uint32_t> trie_;
  std::string pool_;
  std::string where_;
};

}  // namespace slimtrain::tokenize::hf
