#pragma once
/**
 * @brief The normalizers of a HuggingFace tokenizer.json, each as the tokenizers library runs it:
 * BertNormalizer, NFC, NFD, NFKC, NFKD, Nmt, Lowercase, Strip, StripAccents, Replace, Prepend,
 * Precompiled (hf_precompiled.hpp), ByteLevel and Sequence.
 */
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace slimtrain::tokenize::hf {

class Precompiled;
class Regex;

/** @brief A normalizer, or a Sequence of them (steps). */
struct Normalizer {
  enum class Kind {
    kNone,
    kBert,
    kNfc,
    kNfd,
    kNfkc,
    kNfkd,
    kNmt,
    kLowercase,
    kStrip,
    kStripAccents,
    kReplace,
    kPrepend,
    kPrecompiled,
    kByteLevel,
    kSequence
  };
  Kind kind = Kind::kNone;
  std::string type;  ///< as the file names it ("" for none)
  bool clean_text = true, chinese = true, strip_accents = false, lowercase = true;  ///< Bert
  bool strip_left = false, strip_right = false;                                     ///< Strip
  std::shared_ptr<const Regex> pattern;  ///< Replace: what is replaced ...
  std::u32string content;                ///< ... by this; Prepend: what goes first
  std::shared_ptr<const Precompiled> precompiled;
  std::vector<Normalizer> steps;

  /**
   * @brief `text` normalized. `origin`, how many of its first characters stand where the input
   * begins (Piece::origin), becomes how many of the result's do, as the library's alignments say:
   * what is inserted before or made of them counts, a removed leading character takes the origin
   * with it (Strip, a control character cleaned, a mark stripped), and so does a match replaced
   * whose last character is past them.
   */
  std::u32string apply(std::u32string text, std::size_t& origin) const;
};

/** @brief ConfigError naming `where` and the type for one the library does not have. */
Normalizer parse_normalizer(const nlohmann::json& j, const std::string& where);

}  // namespace slimtrain::tokenize::hf
