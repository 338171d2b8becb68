// Added tokens as the tokenizers library finds them (tokenizer/added_vocabulary.rs): two tries,
// searched leftmost-longest; a match the flags refuse (single_word) still ends the search there.
#include "slimtrain/tokenize/hf_added_tokens.hpp"

#include <algorithm>
#include <map>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_model.hpp"
#include "slimtrain/tokenize/hf_normalizer.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {

void AddedTokens::Trie::insert(const std::u32string& key, std::int32_t token) {
  if (key.empty()) {
    empty = token;
    return;
  }
  if (nodes.empty()) {
    nodes.emplace_back();
    first.assign(0x10000, false);
  }
  if (key[0] < 0x10000) first[key[0]] = true;
  std::size_t node = 0;
  for (const char32_t c : key) {
    auto& next = nodes[node].next;
    const auto at = std::lower_bound(next.begin(), next.end(), std::make_pair(c, std::int32_t{-1}));
    if (at != next.end() && at->first == c) {
      node = static_cast<std::size_t>(at->second);
      continue;
    }
    const auto child = static_cast<std::int32_t>(nodes.size());
    next.insert(at, {c, child});
    nodes.emplace_back();  // may move every node: `next` is not used after it
    node = static_cast<std::size_t>(child);
  }
  nodes[node].token = token;
}

std::pair<std::size_t, std::int32_t> AddedTokens::Trie::longest(const std::u32string& text,
                                                                std::size_t at) const {
  std::pair<std::size_t, std::int32_t> best{at, -1};
  if (nodes.empty() || (text[at] < 0x10000 && !first[text[at]])) return best;
  std::size_t node = 0;
  for (std::size_t i = at; i < text.size(); ++i) {
    const auto& next = nodes[node].next;
    const auto hit =
        std::lower_bound(next.begin(), next.end(), std::make_pair(text[i], std::int32_t{-1}));
    if (hit == next.end() || hit->first != text[i]) break;
    node = static_cast<std::size_t>(hit->second);
    if (nodes[node].token >= 0) best = {i + 1, nodes[node].token};
  }
  return best;
}

AddedTokens::AddedTokens(const nlohmann::json& list, const Model& model,
                         const Normalizer& normalizer, const std::string& where) {
  if (list.is_null()) return;
  if (!list.is_array()) SLIMTRAIN_THROW(ConfigError, where, ": added_tokens is not a list");
  std::int64_t next_id = model.size();
  std::map<std::int32_t, std::pair<std::string, Token>> by_id;  // the last flags for each id
  for (const auto& a : list) {
    if (!a.is_object() || !a.contains("content") || !a["content"].is_string())
      SLIMTRAIN_THROW(ConfigError, where, ": an added token without \"content\"");
    const std::string content = a["content"].get<std::string>();
    if (content.empty()) continue;
    Token t;
    t.single_word = a.value("single_word", false);
    t.lstrip = a.value("lstrip", false);
    t.rstrip = a.value("rstrip", false);
    t.normalized = a.value("normalized", !a.value("special", false));
    const auto known = ids_.find(content);
    std::int64_t id = known != ids_.end() ? known->second : model.id_of(content);
    if (id < 0) id = next_id++;
    if (id > INT32_MAX) SLIMTRAIN_THROW(ConfigError, where, ": too many added tokens");
    t.id = static_cast<std::int32_t>(id);
    ids_[content] = t.id;
    by_id[t.id] = {content, t};
    max_id_ = std::max(max_id_, id);
  }
  for (const auto& [id, entry] : by_id) {
    const auto& [content, token] = entry;
    const auto index = static_cast<std::int32_t>(tokens_.size());
    tokens_.push_back(token);
    std::u32string key = decode_utf8(content);
    if (token.normalized) {
      std::size_t origin = 0;
      normalized_.insert(normalizer.apply(std::move(key), origin), index);
    } else {
      raw_.insert(key, index);
    }
  }
}

std::int64_t AddedTokens::id_of(const std::string& content) const {
  const auto found = ids_.find(content);
  return found == ids_.end() ? -1 : found->second;
}

void AddedTokens::split(Piece&& piece, bool normalized, Pieces& out) const {
  const Trie& trie = normalized ? normalized_ : raw_;
  const std::u32string& text = piece.text;
  std::size_t done = 0;  // where the text not yet given out begins
  bool first = true;
  auto give_text = [&](std::size_t begin, std::size_t end) {
    Piece p;
    p.text = text.substr(begin, end - begin);
    p.origin = begin < piece.origin ? std::min(piece.origin, end) - begin : 0;
    out.push_back(std::move(p));
  };
  // The library's search: the longest token at each place; where none is, a token normalized to
  // nothing matches emptily (the end of the text included), and its flags apply all the same.
  for (std::size_t at = 0; at <= text.size();) {
    std::pair<std::size_t, std::int32_t> hit{at, -1};
    if (at < text.size()) hit = trie.longest(text, at);
    const bool empty_match = hit.second < 0;
    if (empty_match && trie.empty < 0) {
      ++at;
      continue;
    }
    const Token& token = tokens_[static_cast<std::size_t>(empty_match ? trie.empty : hit.second)];
    std::size_t start = at, stop = hit.first;
    at = empty_match ? at + 1 : hit.first;
    if (token.single_word && ((start > 0 && is_word_character(text[start - 1])) ||
                              (stop < text.size() && is_word_character(text[stop]))))
      continue;
    if (token.lstrip) {  // the whitespace before it, back to what was given out already
      while (start > 0 && is_whitespace(text[start - 1])) --start;
      start = std::max(start, done);
    }
    if (token.rstrip)
      while (stop < text.size() && is_whitespace(text[stop])) ++stop;
    if (done < start) give_text(done, start);
    if (stop > start) {  // an empty match that took no whitespace only cuts
      Piece t;
      t.token = token.id;
      out.push_back(std::move(t));
    }
    done = stop;
    first = false;
  }
  if (first) {
    out.push_back(std::move(piece));
    return;
  }
  if (done < text.size()) give_text(done, text.size());
}

}  // namespace slimtrain::tokenize::hf
