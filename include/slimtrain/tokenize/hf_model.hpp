#pragma once
/**
 * @brief The models of a HuggingFace tokenizer.json, each as the tokenizers library runs it: a
 * piece of text to ids. WordPiece and WordLevel (hf_model.cpp), BPE (hf_bpe.cpp), Unigram
 * (hf_unigram.cpp); parse_model infers the type as the library does when the file names none.
 */
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace slimtrain::tokenize::hf {

class Model {
 public:
  virtual ~Model() = default;
  /** @brief Appends the ids of one pre-tokenized piece (never empty). */
  virtual void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const = 0;
  std::int64_t max_id() const { return max_id_; }
  /** @brief Entries in the vocabulary (the library's get_vocab_size): where added tokens the
   * vocabulary lacks begin. */
  std::int64_t size() const { return size_; }
  /** @brief The id of `token`, or -1. */
  virtual std::int64_t id_of(const std::string& token) const;

 protected:
  /** @brief The model's "vocab" object; ConfigError naming `where` for a bad entry. */
  void read_vocab(const nlohmann::json& model, const std::string& where);
  /** @brief The id of `token`, DataError naming `where_` when the vocabulary lacks it (an unknown
   * token that is not in the vocabulary: the library fails on that text too). */
  std::int32_t must_have(const std::string& token) const;
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::int64_t max_id_ = -1, size_ = 0;
  std::string where_;
};

/** @brief WordPiece: each piece as its longest vocabulary entries from the left (later ones with
 * the continuing prefix), or the unknown token for all of it. */
class WordPiece final : public Model {
 public:
  WordPiece(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  std::string unk_ = "[UNK]";
  std::string prefix_ = "##";
  std::size_t max_chars_ = 100;
};

/** @brief WordLevel: each piece whole, or the unknown token. */
class WordLevel final : public Model {
 public:
  WordLevel(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  std::string unk_;
};

/**
 * @brief BPE: a piece's characters (the continuing prefix on all but the first, the end-of-word
 * suffix on the last) merged pair by pair, the pair of lowest rank first (the leftmost of
 * equals), a pair listed twice ranked by its last place; a character the vocabulary lacks becomes
 * its <0xXX> bytes (byte_fallback), the unknown token (runs of them fused with fuse_unk), or
 * nothing, its neighbours then merging across the gap. ignore_merges takes a piece in the
 * vocabulary whole; dropout is ignored, as at inference it should be (hf_bpe.cpp).
 */
class Bpe final : public Model {
 public:
  Bpe(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  struct Merge {
    std::int32_t rank, id;
  };
  const Merge* merge_of(std::int32_t left, std::int32_t right) const;
  /** @brief The id of character `c` as the `at`-th of a piece of `size` (with the prefix when
   * not first, the suffix when last), or -1 when the vocabulary lacks it. */
  std::int32_t char_id(char32_t c, std::size_t at, std::size_t size) const;
  // (left << 32 | right) -> rank and merged id, open addressing (the lookups are most of BPE's
  // time): keys_[i] is kNoPair where slot i is free.
  std::vector<std::uint64_t> keys_;
  std::vector<Merge> merges_;
  std::uint64_t mask_ = 0;
  // The single characters of the vocabulary: [first][last] as char_id reads them.
  std::unordered_map<char32_t, std::int32_t> chars_[2][2];
  std::string prefix_, suffix_;
  std::string unk_;
  bool has_unk_ = false, fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  std::int32_t byte_ids_[256];  // <0xXX>'s id, -1 when absent
};

/**
 * @brief Unigram (SentencePiece's): the piece's segmentation into vocabulary entries of the
 * highest total score (Viterbi over its bytes), a character no entry covers being the unknown
 * entry at the lowest score less 10, runs of them fused; with byte_fallback an unknown entry
 * becomes its bytes' <0xXX> entries (hf_unigram.cpp).
 */
class Unigram final : public Model {
 public:
  Unigram(const nlohmann::json& model, const std::string& where);
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const override;

 private:
  void build_trie(const std::vector<std::string>& pieces);
  std::vector<double> scores_;  // by id
  // The pieces as a byte trie, for each place of a word the pieces that begin there in one walk:
  // a node's edges are edges_[first_edge, first_edge + edges), sorted by byte.
  struct TrieNode {
    std::uint32_t first_edge = 0;
    std::uint16_t edges = 0;
    std::int32_t id = -1;
  };
  struct TrieEdge {
    unsigned char byte;
    std::uint32_t child;
  };
  std::vector<TrieNode> nodes_;
  std::vector<TrieEdge> edges_;
  double min_score_ = 0.0;
  std::int32_t unk_ = -1;
  bool byte_fallback_ = false;
};

/** @brief The model section: its "type", or, in files written before it had one, the type its
 * fields make it (BPE, WordPiece, WordLevel, then Unigram, as the library tries them). `type` is
 * set to the one found. ConfigError naming `where` for a model the library does not have. */
std::unique_ptr<Model> parse_model(const nlohmann::json& model, const std::string& where,
                                   std::string& type);

}  // namespace slimtrain::tokenize::hf
