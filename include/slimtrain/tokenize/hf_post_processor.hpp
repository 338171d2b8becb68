#pragma once
/**
 * @brief The post-processor of a HuggingFace tokenizer.json (TemplateProcessing, BertProcessing,
 * RobertaProcessing, ByteLevel and a Sequence of them), which joins a text or a pair with its
 * special tokens, and the library's truncation to a maximum length, longest first.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::tokenize::hf {

class PostProcessor {
 public:
  /** @brief ConfigError naming `where` and the type for one the library does not have. */
  static PostProcessor parse(const nlohmann::json& j, const std::string& where);

  /** @brief Special tokens it adds to one text, or to a pair. */
  std::int64_t added(bool pair) const;
  /** @brief Whether it adds special tokens at all (a pair then needs no separator of its own). */
  bool adds_tokens() const { return !pair_.empty(); }
  /** @brief One past the largest token type a pair gets. */
  std::int64_t type_count() const;
  /** @brief "TemplateProcessing", ... ("" for none). */
  const std::string& type() const { return type_; }

  /**
   * @brief The texts' ids (one or two) cut to `max_length` tokens in all, special tokens
   * included (0: no limit), as the library cuts: one text from its end; a pair longest first,
   * the shorter keeping up to half, the first text the smaller half when both are cut.
   */
  void truncate(std::vector<std::vector<std::int32_t>>& parts, std::int64_t max_length) const;
  /** @brief The texts' ids joined with the special tokens; `types`, when given, set to each
   * token's type (without a post-processor: the first text 0, the second 1). */
  std::vector<std::int32_t> join(const std::vector<std::vector<std::int32_t>>& parts,
                                 std::vector<std::int32_t>* types) const;

  /** @brief One element of a template: special tokens' ids, or text A (0) or B (1), and the type
   * its tokens get (BERT's segment). */
  struct Element {
    int sequence = -1;
    std::vector<std::int32_t> ids;
    std::int32_t type_id = 0;
  };

 private:
  std::string type_;
  std::vector<Element> single_, pair_;  // empty: none that adds tokens
};

}  // namespace slimtrain::tokenize::hf
