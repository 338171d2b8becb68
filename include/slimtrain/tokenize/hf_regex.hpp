#pragma once
/**
 * @brief The regular expressions of a HuggingFace tokenizer.json (Split, Replace, ByteLevel's GPT-2
 * split), run with ICU's engine where the tokenizers library runs Oniguruma: the patterns real
 * files carry mean the same in both once \s is read as Unicode's White_Space.
 */
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace slimtrain::tokenize::hf {

class Regex {
 public:
  /** @brief ConfigError naming `where` for a pattern ICU does not read. */
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  /** @brief The [begin, end) code-point ranges of the matches in `text`, left to right (empty
   * matches included, as Oniguruma's search gives them). */
  std::vector<std::pair<std::size_t, std::size_t>> find_all(const std::u32string& text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/** @brief A literal string as a pattern (every character that is not a letter or digit escaped). */
std::string quote_regex(const std::string& text);

/** @brief GPT-2's split (ByteLevel's use_regex). */
const std::string& gpt2_pattern();

}  // namespace slimtrain::tokenize::hf
