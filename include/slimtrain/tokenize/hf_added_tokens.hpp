#pragma once
/**
 * @brief The added tokens of a HuggingFace tokenizer.json (its "added_tokens" list), found in a
 * text as the tokenizers library finds them: leftmost and longest first, those with normalized
 * false in the raw text, the others in the normalized text, with their single_word, lstrip and
 * rstrip flags; each gets the id the library gives it.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "slimtrain/tokenize/hf_pre_tokenizer.hpp"

namespace slimtrain::tokenize::hf {

class Model;
struct Normalizer;

class AddedTokens {
 public:
  AddedTokens() = default;
  /**
   * @brief From the "added_tokens" list. Ids as the library gives them, whatever the list says:
   * the vocabulary's id for a token it has, else the next one from the vocabulary's size on; a
   * token given twice keeps its first id and its last flags. A token to match normalized is
   * matched as `normalizer` makes it.
   */
  AddedTokens(const nlohmann::json& list, const Model& model, const Normalizer& normalizer,
              const std::string& where);

  /** @brief Appends `piece` to `out` cut at the tokens found in it: those matched in the raw text
   * (normalized false), or those matched in normalized text. */
  void split(Piece&& piece, bool normalized, Pieces& out) const;
  /** @brief Whether any token is matched in raw (normalized false) or normalized text. */
  bool any(bool normalized) const {
    const Trie& t = normalized ? normalized_ : raw_;
    return !t.nodes.empty() || t.empty >= 0;
  }
  /** @brief The id of an added token's content, or -1. */
  std::int64_t id_of(const std::string& content) const;
  /** @brief The largest id given, or -1. */
  std::int64_t max_id() const { return max_id_; }

 private:
  struct Token {
    std::int32_t id = 0;
    bool single_word = false, lstrip = false, rstrip = false, normalized = true;
  };
  // A trie of the tokens' characters; a node's token is the index of the token ending there.
  struct Trie {
    struct Node {
      std::vector<std::pair<char32_t, std::int32_t>> next;  // sorted by character
      std::int32_t token = -1;
    };
    std::vector<Node> nodes;
    std::vector<bool> first;  // which characters below U+10000 begin a token (a quick no)
    std::int32_t empty = -1;  // a token normalized to nothing: it matches everywhere, emptily
    void insert(const std::u32string& key, std::int32_t token);
    /** @brief The longest token at `at`: its end, and its index (-1 when none). */
    std::pair<std::size_t, std::int32_t> longest(const std::u32string& text, std::size_t at) const;
  };
  std::vector<Token> tokens_;
  std::unordered_map<std::string, std::int32_t> ids_;  // content -> id
  Trie raw_, normalized_;
  std::int64_t max_id_ = -1;
};

}  // namespace slimtrain::tokenize::hf
