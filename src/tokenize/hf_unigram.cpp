// Unigram as the tokenizers library runs it (models/unigram/model.rs, after SentencePiece's
// unigram_model.cc): the best-scoring segmentation of a word's bytes, found left to right.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_model.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

// SentencePiece's penalty below the lowest score for a character no piece covers.
constexpr double kUnknownPenalty = 10.0;

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return 4;
}

}  // namespace

Unigram::Unigram(const nlohmann::json& model, const std::string& where) {
  where_ = where;
  if (!model.contains("vocab") || !model["vocab"].is_array() || model["vocab"].empty())
    SLIMTRAIN_THROW(ConfigError, where, ": the Unigram model has no \"vocab\" list");
  min_score_ = std::numeric_limits<double>::infinity();
  std::vector<std::string> pieces;
  for (const auto& entry : model["vocab"]) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
      SLIMTRAIN_THROW(ConfigError, where, ": a Unigram vocab entry ", entry.dump().substr(0, 80),
                      " is not [piece, score]");
    const std::string piece = entry[0].get<std::string>();
    const double score = entry[1].get<double>();
    const auto id = static_cast<std::int32_t>(scores_.size());
    vocab_[piece] = id;  // a piece given twice: the later id, as the library's map keeps
    scores_.push_back(score);
    min_score_ = std::min(min_score_, score);
    pieces.push_back(piece);
  }
  build_trie(pieces);
  max_id_ = static_cast<std::int64_t>(scores_.size()) - 1;
  size_ = static_cast<std::int64_t>(scores_.size());
  if (model.contains("unk_id") && !model["unk_id"].is_null()) {
    if (!model["unk_id"].is_number_integer() || model["unk_id"].get<std::int64_t>() < 0 ||
        model["unk_id"].get<std::int64_t>() > max_id_)
      SLIMTRAIN_THROW(ConfigError, where, ": the Unigram unk_id ", model["unk_id"].dump(),
                      " is not in the vocab");
    unk_ = model["unk_id"].get<std::int32_t>();
  }
  byte_fallback_ = model.value("byte_fallback", false);
}

void Unigram::build_trie(const std::vector<std::string>& pieces) {
  // The pieces sorted (equal ones by id, the later last), then each node's range of them split
  // by the byte after its depth; a piece that ends at a node is the first of its range.
  std::vector<std::uint32_t> order(pieces.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return pieces[a] != pieces[b] ? pieces[a] < pieces[b] : a < b;
  });
  struct Range {
    std::uint32_t node, lo, hi, depth;
  };
  nodes_.assign(1, TrieNode{});
  std::vector<Range> todo{{0, 0, static_cast<std::uint32_t>(order.size()), 0}};
  while (!todo.empty()) {
    Range r = todo.back();
    todo.pop_back();
    while (r.lo < r.hi && pieces[order[r.lo]].size() == r.depth)
      nodes_[r.node].id = static_cast<std::int32_t>(order[r.lo++]);
    nodes_[r.node].first_edge = static_cast<std::uint32_t>(edges_.size());
    for (std::uint32_t lo = r.lo; lo < r.hi;) {
      const char byte = pieces[order[lo]][r.depth];
      std::uint32_t hi = lo + 1;
      while (hi < r.hi && pieces[order[hi]][r.depth] == byte) ++hi;
      const auto child = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(TrieNode{});
      edges_.push_back({static_cast<unsigned char>(byte), child});
      ++nodes_[r.node].edges;
      todo.push_back({child, lo, hi, r.depth + 1});
      lo = hi;
    }
  }
}

void Unigram::tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
  const std::string s = encode_utf8(word);
  const std::size_t n = s.size();
  struct Best {
    double score = 0.0;
    std::int64_t from = -1;  // where the best path's last piece starts; -1: not reached
    std::int32_t id = 0;
  };
  std::vector<Best> best(n + 1);
  const double unknown_score = min_score_ - kUnknownPenalty;
  auto offer = [&](std::size_t end, std::size_t start, std::int32_t id, double score) {
    Best& b = best[end];
    if (b.from < 0 || score > b.score) b = {score, static_cast<std::int64_t>(start), id};
  };
  for (std::size_t start = 0; start < n;) {
    const double here = best[start].score;
    const std::size_t char_bytes =
        std::min(utf8_length(static_cast<unsigned char>(s[start])), n - start);
    bool single = false;  // a piece of exactly this character
    std::uint32_t node = 0;
    for (std::size_t end = start; end < n; ++end) {  // the pieces that begin here, shortest first
      const TrieNode& at = nodes_[node];
      const auto first = edges_.begin() + at.first_edge, last = first + at.edges;
      const auto edge =
          std::lower_bound(first, last, static_cast<unsigned char>(s[end]),
                           [](const TrieEdge& e, unsigned char b) { return e.byte < b; });
      if (edge == last || edge->byte != static_cast<unsigned char>(s[end])) break;
      node = edge->child;
      const std::int32_t id = nodes_[node].id;
      if (id < 0) continue;  // pieces are whole characters: none ends inside one
      offer(end + 1, start, id, here + scores_[static_cast<std::size_t>(id)]);
      if (end + 1 - start == char_bytes) single = true;
    }
    if (!single) {
      if (unk_ < 0)
        SLIMTRAIN_THROW(DataError, where_, ": the Unigram model has no piece for \"",
                        s.substr(start, char_bytes), "\" and no unk_id");
      offer(start + char_bytes, start, unk_, here + unknown_score);
    }
    start += char_bytes;
  }
  // Back from the end: the pieces, with runs of unknown ones fused into one.
  std::vector<std::string> pieces;
  std::string unknown;
  for (std::size_t end = n; end > 0;) {
    const Best& b = best[end];
    const auto start = static_cast<std::size_t>(b.from);
    if (b.id == unk_) {
      unknown.insert(0, s.substr(start, end - start));
    } else {
      if (!unknown.empty()) pieces.push_back(std::move(unknown));
      unknown.clear();
      pieces.push_back(s.substr(start, end - start));
    }
    end = start;
  }
  if (!unknown.empty()) pieces.push_back(std::move(unknown));
  std::reverse(pieces.begin(), pieces.end());
  for (const std::string& piece : pieces) {
    const auto found = vocab_.find(piece);
    if (found != vocab_.end()) {
      ids.push_back(found->second);
      continue;
    }
    if (byte_fallback_) {  // every byte's <0xXX> piece, or none of them
      std::vector<std::int32_t> bytes;
      for (const char c : piece) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(c));
        const auto b = vocab_.find(name);
        if (b == vocab_.end()) break;
        bytes.push_back(b->second);
      }
      if (bytes.size() == piece.size()) {
        ids.insert(ids.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    ids.push_back(unk_);
  }
}

}  // namespace slimtrain::tokenize::hf
