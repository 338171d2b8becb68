#pragma once
/**
 * @brief A SentencePiece tokenizer (Debian's libsentencepiece, the library HuggingFace's and
 * Google's models use): loaded from a model's bytes, or trained in memory on a list of texts.
 * The bytes are what `prep text` stores in the HDF5 file, so every later reader (eval, export, a
 * user's python3-sentencepiece) decodes with the same model. SentencePiece itself is opened at
 * the first use (detail/sentencepiece_module.hpp says why); a build without it throws Error.
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace slimtrain::tokenize {

namespace detail {
class SentencePieceModule;
}

struct TokenizerTraining {
  /** @brief Pieces; 0: as many as the texts fill, up to kAutoVocabulary (SentencePiece's soft
   * limit). */
  std::int64_t vocab_size = 0;
  /** @brief "unigram" or "bpe" (the caller checks the option). */
  std::string type = "unigram";
  int threads = 1;
};

/** @brief The most pieces --vocab-size 0 trains: SentencePiece's default size. */
inline constexpr std::int64_t kAutoVocabulary = 8000;

/**
 * @brief Bytes of text SentencePiece trains on at once: longer texts are cut at a space (or at a
 * character's edge) into pieces no longer, for training only (SentencePiece skips sentences over
 * its max_sentence_length, 4192 bytes, and with all of them skipped stops on an internal check).
 */
inline constexpr std::size_t kTrainingPieceBytes = 2048;

/** @brief Bytes of text SentencePiece encodes at once (encode cuts longer texts at spaces). */
inline constexpr std::size_t kEncodePieceBytes = std::size_t{64} << 10;

/**
 * @brief Bytes of training text SentencePiece learns from at most: past it, an even sample of
 * the pieces (every k-th, the same on every run). SentencePiece's time grows with the text (a
 * 50 MB record took 52 s to train on, and 3 GB); 16 MiB fills any vocabulary a classifier uses.
 */
inline constexpr std::size_t kTrainingSampleBytes = std::size_t{16} << 20;

class HfTokenizer;

class Tokenizer {
 public:
  /**
   * @brief A SentencePiece model's bytes, or a HuggingFace tokenizer.json's text (hf_tokenizer.hpp:
   * no SentencePiece needed); DataError naming `where` when the bytes are neither, ConfigError
   * naming the component a tokenizer.json needs that is not implemented.
   */
  static Tokenizer load(const std::string& model_bytes, const std::string& where);
  /**
   * @brief Trains on `texts` (deterministic: the same texts give the same bytes). The model has
   * pad 0, unk 1 and a control piece <sep> that joins text pairs; no bos or eos. ConfigError
   * naming --vocab-size when the texts cannot fill it, or it is too small for their characters,
   * each with the size that would do.
   */
  static Tokenizer train(const std::vector<std::string>& texts, const TokenizerTraining& options);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  /** @brief Appends the ids of `text` to `ids` (no special tokens). */
  void encode(const std::string& text, std::vector<std::int32_t>& ids) const;
  /**
   * @brief Appends one sample's ids: a text, or a pair joined by the separator piece; a
   * tokenizer.json adds its post-processor's special tokens ([CLS] A [SEP] B [SEP]). Cut to
   * `max_length` tokens (0: all), the longer text of a pair first. Returns the length before the
   * cut. `types`, when given, gets each token's type as the post-processor assigns it (BERT's
   * segments: 0 for [CLS] A [SEP], 1 for B [SEP]); a tokenizer.json's only.
   */
  std::int64_t encode_record(const std::vector<std::string>& texts, std::int64_t max_length,
                             std::vector<std::int32_t>& ids,
                             std::vector<std::int32_t>* types = nullptr) const;
  /** @brief One past the largest token type a tokenizer.json's pair template gives (1 without). */
  std::int64_t type_count() const;
  /** @brief Whether a pair of texts can be encoded (a separator piece, or a pair template). */
  bool joins_pairs() const;
  /** @brief "sentencepiece" or "huggingface": what the bytes are. */
  std::string kind() const;
  std::int64_t vocab_size() const;
  /** @brief The model's pad piece, or 0 when it has none (the mask marks padding anyway). */
  std::int64_t pad_id() const;
  /**
   * @brief The piece between the two texts of a pair: <sep>, [SEP] or </s>, the first the model
   * has; -1 when it has none.
   */
  std::int64_t separator_id() const;
  const std::string& bytes() const { return bytes_; }

 private:
  Tokenizer();
  explicit Tokenizer(std::unique_ptr<HfTokenizer> hf);
  std::unique_ptr<detail::SentencePieceModule> processor_;
  std::unique_ptr<HfTokenizer> hf_;
  std::string bytes_;
};

}  // namespace slimtrain::tokenize
