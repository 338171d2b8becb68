// HfTokenizer on the edges the e2e comparison (tests/e2e/hf_tokenizer.sh) cannot reach through
// prep text, which refuses an empty record: empty strings, whitespace alone, a pair with an empty
// side; the token types of a pair; a Unigram tokenizer's SentencePiece rules, quirks included; and
// the synthetic cases of fixtures/cases.json, one small file per rule of the library (a pair listed
// twice in merges, a symbol the vocabulary lacks, StripAccents' spacing marks, byte fallback,
// added tokens' flags and ids, Metaspace's first, truncation, files without a model type). The
// tokenizer.json files and the expected ids are the tokenizers library's
// (fixtures/make_tokenizers.py writes them; it prints the ids of the tests written out here).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_tokenizer.hpp"

namespace slimtrain::tokenize {
namespace {

using Ids = std::vector<std::int32_t>;

HfTokenizer fixture(const std::string& name) {
  const std::string path =
      std::string(SLIMTRAIN_TEST_SOURCE_DIR) + "/tests/unit/fixtures/" + name + "-tokenizer.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return HfTokenizer::parse(std::string(std::istreambuf_iterator<char>(in), {}), path);
}

const nlohmann::json& cases() {
  static const nlohmann::json all = [] {
    std::ifstream in(std::string(SLIMTRAIN_TEST_SOURCE_DIR) + "/tests/unit/fixtures/cases.json");
    return nlohmann::json::parse(in);
  }();
  return all;
}

// Every case of cases.json whose tokenizer's name begins with `prefix` gives the library's ids;
// how many there were.
std::size_t check_cases(const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& c : cases()["cases"]) {
    const std::string name = c["tokenizer"];
    if (name.rfind(prefix, 0) != 0) continue;
    const HfTokenizer t = HfTokenizer::parse(cases()["tokenizers"][name].dump(), name);
    std::int64_t full = 0;
    const auto texts = c["texts"].get<std::vector<std::string>>();
    EXPECT_EQ(t.encode(texts, c["max_length"].get<std::int64_t>(), full), c["ids"].get<Ids>())
        << name << ": " << c["texts"].dump();
    ++n;
  }
  return n;
}

Ids encode(const HfTokenizer& t, const std::vector<std::string>& texts) {
  std::int64_t full = -1;
  Ids ids = t.encode(texts, 0, full);
  EXPECT_EQ(full, static_cast<std::int64_t>(ids.size()));
  return ids;
}

TEST(HfTokenizer, WordPieceEmptyStringIsClsSep) {
  const HfTokenizer t = fixture("wordpiece");
  EXPECT_EQ(encode(t, {""}), (Ids{2, 3}));
  EXPECT_EQ(t.encode_plain(""), Ids{});
  // Whitespace alone, ASCII or ideographic, normalises to nothing.
  EXPECT_EQ(encode(t, {"   "}), (Ids{2, 3}));
  EXPECT_EQ(encode(t, {"\u3000"}), (Ids{2, 3}));
  EXPECT_EQ(t.encode_plain("\u3000"), Ids{});
}

TEST(HfTokenizer, WordPiecePairsWithAnEmptySide) {
  const HfTokenizer t = fixture("wordpiece");
  EXPECT_EQ(encode(t, {"", "hello"}), (Ids{2, 3, 5, 3}));
  EXPECT_EQ(encode(t, {"hello", ""}), (Ids{2, 5, 3, 3}));
  EXPECT_EQ(encode(t, {"", ""}), (Ids{2, 3, 3}));
}

TEST(HfTokenizer, TokenTypesAsTheTemplateGivesThem) {
  // [CLS] A [SEP] of type 0, B [SEP] of type 1 (BERT's segments); an empty B keeps its [SEP].
  const HfTokenizer t = fixture("wordpiece");
  std::int64_t full = 0;
  Ids types;
  EXPECT_EQ(t.encode({"hello", "world"}, 0, full, &types), (Ids{2, 5, 3, 6, 3}));
  EXPECT_EQ(types, (Ids{0, 0, 0, 1, 1}));
  t.encode({"hello", ""}, 0, full, &types);
  EXPECT_EQ(types, (Ids{0, 0, 0, 1}));
  EXPECT_EQ(t.type_count(), 2);
  // RoBERTa's processing gives one type to both texts.
  const HfTokenizer r = fixture("roberta");
  r.encode({"ab", "ab"}, 0, full, &types);
  EXPECT_EQ(types, (Ids{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r.type_count(), 1);
}

TEST(HfTokenizer, WordPieceBesideTheEdges) {
  // The same fixture on text, so an empty result above is not a tokenizer that gives nothing.
  const HfTokenizer t = fixture("wordpiece");
  EXPECT_EQ(encode(t, {"Hello, worlds"}), (Ids{2, 5, 9, 6, 7, 3}));
  EXPECT_EQ(encode(t, {"Caf\u00e9"}), (Ids{2, 8, 3}));  // lowercased, accent stripped
}

TEST(HfTokenizer, ByteLevelBpeEmptyStringIsNoToken) {
  const HfTokenizer t = fixture("byte-bpe");
  EXPECT_EQ(encode(t, {""}), Ids{});
  EXPECT_EQ(t.encode_plain(""), Ids{});
  EXPECT_EQ(encode(t, {" "}), (Ids{5}));  // one space is a token of its own: Ġ
  EXPECT_EQ(encode(t, {"ab ab"}), (Ids{6, 7}));
  EXPECT_EQ(encode(t, {"abab b"}), (Ids{6, 6, 5, 4}));
}

TEST(HfTokenizer, RobertaEmptyStringKeepsItsSpecialTokens) {
  const HfTokenizer t = fixture("roberta");
  EXPECT_EQ(encode(t, {""}), (Ids{0, 1}));
  EXPECT_EQ(encode(t, {"", ""}), (Ids{0, 1, 1, 1}));
  EXPECT_EQ(encode(t, {"ab"}), (Ids{0, 6, 1}));
}

TEST(HfTokenizer, UnigramWithSentencePieceRules) {
  // A converted SentencePiece model: Precompiled rules, Metaspace, <s> A </s>, unknowns fused.
  const HfTokenizer t = fixture("unigram");
  EXPECT_EQ(encode(t, {""}), (Ids{0, 2}));
  EXPECT_EQ(encode(t, {"the cafe"}), (Ids{0, 4, 8, 6, 5, 12, 5, 2}));
  EXPECT_EQ(encode(t, {"\ufb01ne \uff21\uff22"}), (Ids{0, 10, 4, 18, 19, 2}));  // fi, A, B
  EXPECT_EQ(encode(t, {"cafe\u0301"}), (Ids{0, 12, 23, 2}));  // e + acute: one grapheme, é
  // The library's quirk: a short grapheme takes the rule of its first character whole, so the
  // accent after the ligature is dropped.
  EXPECT_EQ(encode(t, {"\ufb01\u0301x"}), (Ids{0, 25, 9, 3, 2}));
  EXPECT_EQ(encode(t, {"zzz qq"}), (Ids{0, 4, 3, 4, 3, 2}));  // a run of unknowns is one <unk>
  EXPECT_EQ(encode(t, {"a\u3000b"}), (Ids{0, 15, 4, 3, 2}));
  EXPECT_EQ(encode(t, {"the", "cafe"}), (Ids{0, 4, 8, 6, 5, 2, 2, 12, 5, 2}));
}

TEST(HfTokenizer, APairListedTwiceInMergesRanksByItsLastPlace) {
  EXPECT_EQ(check_cases("merges-twice"), 3u);  // "abc": a|bc, not ab|c
}

TEST(HfTokenizer, ASymbolTheVocabLacksWithoutUnkIsDroppedAndItsNeighboursMerge) {
  EXPECT_EQ(check_cases("missing-symbol"), 3u);  // "axb": ab
}

TEST(HfTokenizer, StripAccentsRemovesSpacingMarksToo) {
  EXPECT_EQ(check_cases("strip-accents"), 2u);  // Devanagari's Mc vowel signs
}

TEST(HfTokenizer, BpeOptions) {
  // Byte fallback beside unknown characters (fused and not), the continuing prefix and the
  // end-of-word suffix, dropout ignored.
  EXPECT_EQ(check_cases("byte-fallback") + check_cases("prefix-suffix") + check_cases("dropout"),
            5u);
}

TEST(HfTokenizer, AddedTokensFlagsAndIds) {
  EXPECT_EQ(check_cases("added-flags"), 1u);
  EXPECT_EQ(check_cases("added-normalized-to-nothing"), 2u);
  EXPECT_EQ(check_cases("metaspace-first"), 4u);
}

TEST(HfTokenizer, PairsTruncatedLongestFirst) {
  EXPECT_EQ(check_cases("truncate"), 8u);  // ties with an odd budget: the first text the less
}

TEST(HfTokenizer, FilesWithoutAModelTypeAreReadAsTheLibraryInfersIt) {
  EXPECT_EQ(check_cases("untyped-"), 4u);
}

TEST(HfTokenizer, WhatTheLibraryDoesNotLoadIsRefusedNamingIt) {
  ASSERT_EQ(cases()["refused"].size(), 8u);
  for (const auto& r : cases()["refused"]) {
    try {
      HfTokenizer::parse(r["tokenizer"].dump(), "fixture.json");
      ADD_FAILURE() << r["name"] << " was read";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("fixture.json: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(r["says"].get<std::string>()), std::string::npos)
          << r["name"] << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace slimtrain::tokenize
