#pragma once
/**
 * @brief What in a text SentencePiece would not read as the writer meant: bytes that are no
 * UTF-8 (a Latin-1 or Windows-1252 file, a cut multi-byte character) and NUL bytes. Both become
 * <unk> without a word from the tokenizer; `prep text` counts them and names the first record.
 */
#include <cstdint>
#include <string>
#include <string_view>

namespace slimtrain::data {

struct TextFlaws {
  std::int64_t invalid_utf8 = 0;  ///< bytes of no valid UTF-8 sequence (overlong, surrogates too)
  std::int64_t nul = 0;           ///< NUL bytes
  bool any() const { return invalid_utf8 > 0 || nul > 0; }
};

TextFlaws text_flaws(std::string_view text);

/** @brief `text` fit for a one-line message: bytes that are no UTF-8 and control characters
 * (a NUL, a newline) written as \xNN, so a binary header never reaches the terminal raw. */
std::string printable(std::string_view text);

/** @brief `text` with each byte that is no UTF-8, and each NUL, replaced by U+FFFD: what a
 * label becomes in the file's UTF-8 class names without --strict. */
std::string without_flaws(std::string_view text);

}  // namespace slimtrain::data
