#pragma once
/**
 * @brief The pre-tokenizers of a HuggingFace tokenizer.json, each as the tokenizers library runs
 * it: BertPreTokenizer, ByteLevel, Whitespace, WhitespaceSplit, Punctuation, Digits, Split,
 * Metaspace, CharDelimiterSplit, UnicodeScripts, FixedLength and Sequence; they cut the text
 * into the pieces the model tokenizes one by one.
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::tokenize::hf {

class Regex;

/**
 * @brief A piece of one text on its way to the model: text still to tokenize, or an added token
 * already found in it (token >= 0), which no later step touches.
 */
struct Piece {
  std::u32string text;
  std::int32_t token = -1;
  /**
   * @brief How many of its first characters stand where the input begins, in the library's
   * alignments (Metaspace's prepend_scheme first prepends where this is not 0): the input's first
   * character, and what the steps inserted before it or made of it.
   */
  std::size_t origin = 0;
};
using Pieces = std::vector<Piece>;

/** @brief What a split keeps of what it cuts at (the library's SplitDelimiterBehavior). */
enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/** @brief A pre-tokenizer, or a Sequence of them. */
struct PreTokenizer {
  enum class Kind {
    kNone,
    kBert,
    kByteLevel,
    kWhitespace,
    kWhitespaceSplit,
    kPunctuation,
    kDigits,
    kSplit,
    kMetaspace,
    kCharDelimiter,
    kUnicodeScripts,
    kFixedLength,
    kSequence
  };
  Kind kind = Kind::kNone;
  std::string type;  ///< as the file names it ("" for none)
  std::vector<PreTokenizer> steps;
  std::shared_ptr<const Regex> regex;       ///< Split's pattern; ByteLevel's with use_regex
  Behavior behavior = Behavior::kIsolated;  ///< Split, Punctuation
  bool invert = false;                      ///< Split: the pattern matches what is kept
  bool individual_digits = false;           ///< Digits
  bool add_prefix_space = false;            ///< ByteLevel
  enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kAlways;  ///< Metaspace
  char32_t replacement = U'\u2581';  ///< Metaspace: what a space becomes; CharDelimiterSplit's
  bool split = true;                 ///< Metaspace: a piece begins at each replacement
  std::size_t length = 5;            ///< FixedLength: characters per piece

  /** @brief Cuts every text piece of `pieces` (empty ones are dropped, as the library drops them).
   */
  void apply(Pieces& pieces) const;
  /** @brief Whether a Metaspace of it prepends at the input's first character only. */
  bool prepends_first() const;
};

/** @brief ConfigError naming `where` and the type for one the library does not have. */
PreTokenizer parse_pre_tokenizer(const nlohmann::json& j, const std::string& where);

}  // namespace slimtrain::tokenize::hf
