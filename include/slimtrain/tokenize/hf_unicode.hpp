#pragma once
/**
 * @brief The Unicode a HuggingFace tokenizer needs, from ICU: UTF-8 to code points and back,
 * NFD/NFC, per-character lowercasing as the tokenizers library does it (Rust's char::to_lowercase:
 * full mappings, no context), and the character classes its normalizers and pre-tokenizers test.
 */
#include <string>

namespace slimtrain::tokenize::hf {

/** @brief Code points of UTF-8 `text`; an invalid byte sequence reads as U+FFFD. */
std::u32string decode_utf8(const std::string& text);
std::string encode_utf8(const std::u32string& text);
/** @brief One code point as UTF-8. */
std::string encode_utf8(char32_t c);

std::u32string nfd(const std::u32string& text);
std::u32string nfc(const std::u32string& text);
std::u32string nfkd(const std::u32string& text);
std::u32string nfkc(const std::u32string& text);
/** @brief c lowercased alone (one or more code points). */
std::u32string lowercase(char32_t c);

/** @brief Unicode White_Space, plus \t \n \r. */
bool is_whitespace(char32_t c);
/** @brief General category C (Cc, Cf, Cs, Co, Cn), but not \t \n \r. */
bool is_control(char32_t c);
/** @brief ASCII punctuation or general category P. */
bool is_punctuation(char32_t c);
/** @brief General category Mn (a nonspacing mark: what BertNormalizer's accent stripping removes
 * after NFD). */
bool is_nonspacing_mark(char32_t c);
/** @brief General category M (Mn, Mc, Me): what the StripAccents normalizer removes. */
bool is_mark(char32_t c);
/** @brief General category N (Nd, Nl, No), as Rust's char::is_numeric (the Digits pre-tokenizer).
 */
bool is_numeric(char32_t c);
/** @brief Regular expressions' Unicode \\w (UTS #18): alphabetic, numbers, marks, connectors. */
bool is_word_character(char32_t c);
/** @brief The CJK ideograph blocks BERT's normalizer surrounds with spaces. */
bool is_cjk(char32_t c);

/** @brief The script the UnicodeScripts pre-tokenizer gives `c` (an ICU UScriptCode), or -1 for
 * "any", which joins whatever is beside it: the library's table is Unicode 9.0's, so what came
 * later is "any", as are unknown characters and the space; Hiragana, Katakana and U+30FC count as
 * Han (SentencePiece's rule). */
int unigram_script(char32_t c);

/** @brief `text`'s UTF-8 bytes as GPT-2's printable characters, one per byte (ByteLevel). */
std::u32string byte_level(const std::u32string& text);

}  // namespace slimtrain::tokenize::hf
