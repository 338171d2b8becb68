// BPE as the tokenizers library runs it (models/bpe/model.rs and word.rs): a piece's characters
// looked up one by one, then merged through a queue ordered by rank and position, over ids.
#include <algorithm>
#include <cstdio>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_model.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize::hf {
namespace {

std::string optional_string(const nlohmann::json& model, const char* key) {
  return model.contains(key) && model[key].is_string() ? model[key].get<std::string>() : "";
}

bool optional_flag(const nlohmann::json& model, const char* key) {
  return model.contains(key) && model[key].is_boolean() && model[key].get<bool>();
}

// The merges as pairs: ["a", "b"] lists, or "a b" strings (the older form, where a line starting
// with #version is a header, not a merge).
std::vector<std::pair<std::string, std::string>> merge_list(const nlohmann::json& model,
                                                            const std::string& where) {
  if (!model.contains("merges") || !model["merges"].is_array())
    SLIMTRAIN_THROW(ConfigError, where, ": the BPE model has no \"merges\" list");
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(model["merges"].size());
  for (const auto& m : model["merges"]) {
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      continue;
    }
    if (m.is_string()) {
      const std::string line = m.get<std::string>();
      if (line.rfind("#version", 0) == 0) continue;
      const std::size_t space = line.find(' ');
      if (space != std::string::npos && line.find(' ', space + 1) == std::string::npos) {
        out.emplace_back(line.substr(0, space), line.substr(space + 1));
        continue;
      }
    }
    SLIMTRAIN_THROW(ConfigError, where, ": merge ", m.dump(), " is not \"a b\" or [a, b]");
  }
  return out;
}

constexpr std::uint64_t kNoPair = ~std::uint64_t{0};

// A 64-bit mix (splitmix64's finalizer): ids are small and dense, the table's slots are not.
std::uint64_t slot_of(std::uint64_t key) {
  key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
  key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
  return key ^ (key >> 31);
}

std::size_t utf8_bytes(char32_t c) {
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

struct Symbol {
  std::int32_t id;
  std::int32_t prev, next;  // neighbours still standing; -1 at the ends
  std::size_t bytes;        // 0 once merged into its left neighbour
};

struct Candidate {
  std::int32_t rank, pos, id;
  bool operator<(const Candidate& o) const {  // a max-heap of this is lowest rank, then position
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

}  // namespace

Bpe::Bpe(const nlohmann::json& model, const std::string& where) {
  read_vocab(model, where);
  if (model.contains("dropout") && model["dropout"].is_number()) {
    const double p = model["dropout"].get<double>();
    if (!(p >= 0.0 && p <= 1.0))
      SLIMTRAIN_THROW(ConfigError, where, ": the BPE dropout ", p, " is not in [0, 1]");
  }
  prefix_ = optional_string(model, "continuing_subword_prefix");
  suffix_ = optional_string(model, "end_of_word_suffix");
  has_unk_ = model.contains("unk_token") && model["unk_token"].is_string();
  if (has_unk_) unk_ = model["unk_token"].get<std::string>();
  fuse_unk_ = optional_flag(model, "fuse_unk");
  byte_fallback_ = optional_flag(model, "byte_fallback");
  ignore_merges_ = optional_flag(model, "ignore_merges");
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    byte_ids_[b] = static_cast<std::int32_t>(id_of(name));
  }
  // A merge's result is the left token and the right one less the continuing prefix; a pair given
  // again is ranked by its later place (the map keeps the last).
  const auto merges = merge_list(model, where);
  std::size_t slots = 16;
  while (slots < 2 * merges.size()) slots *= 2;
  keys_.assign(slots, kNoPair);
  merges_.resize(slots);
  mask_ = slots - 1;
  std::int32_t rank = 0;
  auto id_or_throw = [&](const std::string& token) {
    const std::int64_t id = id_of(token);
    if (id < 0)
      SLIMTRAIN_THROW(ConfigError, where, ": the merges name \"", token,
                      "\", which is not in the vocab");
    return static_cast<std::int32_t>(id);
  };
  for (const auto& [left, right] : merges) {
    if (right.size() < prefix_.size())
      SLIMTRAIN_THROW(ConfigError, where, ": merge \"", left, " ", right,
                      "\" is shorter than the continuing prefix");
    const std::uint64_t key = (static_cast<std::uint64_t>(id_or_throw(left)) << 32) |
                              static_cast<std::uint32_t>(id_or_throw(right));
    std::uint64_t slot = slot_of(key) & mask_;
    while (keys_[slot] != kNoPair && keys_[slot] != key) slot = (slot + 1) & mask_;
    keys_[slot] = key;
    merges_[slot] = Merge{rank++, id_or_throw(left + right.substr(prefix_.size()))};
  }
  // Each vocabulary entry that is one character, with the prefix and suffix it may carry.
  for (const auto& [token, id] : vocab_)
    for (int first = 0; first < 2; ++first)
      for (int last = 0; last < 2; ++last) {
        const std::string& before = first ? std::string() : prefix_;
        const std::string& after = last ? suffix_ : std::string();
        if (token.size() <= before.size() + after.size() ||
            token.compare(0, before.size(), before) ||
            token.compare(token.size() - after.size(), after.size(), after))
          continue;
        const std::u32string c =
            decode_utf8(token.substr(before.size(), token.size() - before.size() - after.size()));
        if (c.size() == 1 &&
            encode_utf8(c) ==
                token.substr(before.size(), token.size() - before.size() - after.size()))
          chars_[first][last][c[0]] = id;
      }
}

const Bpe::Merge* Bpe::merge_of(std::int32_t left, std::int32_t right) const {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(left) << 32) | static_cast<std::uint32_t>(right);
  for (std::uint64_t slot = slot_of(key) & mask_;; slot = (slot + 1) & mask_) {
    if (keys_[slot] == key) return &merges_[slot];
    if (keys_[slot] == kNoPair) return nullptr;
  }
}

std::int32_t Bpe::char_id(char32_t c, std::size_t at, std::size_t size) const {
  const auto& chars = chars_[at == 0][at + 1 == size];
  const auto found = chars.find(c);
  return found == chars.end() ? -1 : found->second;
}

void Bpe::tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
  if (ignore_merges_) {
    const std::int64_t id = id_of(encode_utf8(word));
    if (id >= 0) {
      ids.push_back(static_cast<std::int32_t>(id));
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&symbols](std::int32_t id, std::size_t bytes) {
    const auto n = static_cast<std::int32_t>(symbols.size());
    if (n > 0) symbols.back().next = n;
    symbols.push_back({id, n - 1, -1, bytes});
  };
  // An unknown character waits, so the next one can fuse with it; a byte-fallback character does
  // not flush it (the library's order: its bytes can come before the unknown token before them).
  std::int32_t unknown = -1;
  std::size_t unknown_bytes = 0;
  std::string s;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const std::size_t bytes = utf8_bytes(word[i]);
    const std::int32_t id = char_id(word[i], i, word.size());
    if (id >= 0) {
      if (unknown >= 0) add(unknown, unknown_bytes);
      unknown = -1;
      add(id, bytes);
      continue;
    }
    const std::string c = encode_utf8(word[i]);
    s.assign(i > 0 ? prefix_ : std::string());
    s += c;
    if (i + 1 == word.size()) s += suffix_;
    if (byte_fallback_ && std::all_of(s.begin(), s.end(), [this](char b) {
          return byte_ids_[static_cast<unsigned char>(b)] >= 0;
        })) {
      for (const char b : s) add(byte_ids_[static_cast<unsigned char>(b)], 1);
      continue;
    }
    if (!has_unk_) continue;  // dropped: its neighbours meet
    if (unknown >= 0 && fuse_unk_) {
      unknown_bytes += c.size();
      continue;
    }
    if (unknown >= 0) add(unknown, unknown_bytes);
    unknown = must_have(unk_);
    unknown_bytes = c.size();
  }
  if (unknown >= 0) add(unknown, unknown_bytes);

  std::vector<Candidate> queue;
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
    if (const Merge* m = merge_of(symbols[i].id, symbols[i + 1].id))
      queue.push_back({m->rank, static_cast<std::int32_t>(i), m->id});
  std::make_heap(queue.begin(), queue.end());
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end());
    const Candidate top = queue.back();
    queue.pop_back();
    Symbol& left = symbols[static_cast<std::size_t>(top.pos)];
    if (left.bytes == 0 || left.next < 0) continue;
    Symbol& right = symbols[static_cast<std::size_t>(left.next)];
    const Merge* now = merge_of(left.id, right.id);
    if (now == nullptr || now->id != top.id) continue;  // a pair that has changed since
    left.id = top.id;
    left.bytes += right.bytes;
    left.next = right.next;
    right.bytes = 0;
    if (left.next >= 0) symbols[static_cast<std::size_t>(left.next)].prev = top.pos;
    auto offer = [&](std::int32_t pos) {
      const Symbol& a = symbols[static_cast<std::size_t>(pos)];
      if (a.next < 0) return;
      if (const Merge* m = merge_of(a.id, symbols[static_cast<std::size_t>(a.next)].id)) {
        queue.push_back({m->rank, pos, m->id});
        std::push_heap(queue.begin(), queue.end());
      }
    };
    if (left.prev >= 0) offer(left.prev);
    offer(top.pos);
  }
  for (const Symbol& sym : symbols)
    if (sym.bytes != 0) ids.push_back(sym.id);
}

}  // namespace slimtrain::tokenize::hf
