#pragma once
/**
 * @brief The boundary to SentencePiece, which lives in a module of its own
 * (libslimtrain_sentencepiece.so) that the tokenizer opens with dlopen(RTLD_LOCAL |
 * RTLD_DEEPBIND).
 *
 * Why: Debian's libsentencepiece carries its own copy of protobuf 3.14 and exports it; linked
 * into slimtrain beside LibTorch's libprotobuf 3.21, the first copy in the global symbol scope
 * serves both, and the process crashes at start-up (or protobuf refuses the version mismatch).
 * Opened locally and deep-bound, the module and SentencePiece keep their copy to themselves. Only
 * virtual calls and standard-library types cross this boundary.
 */
#include <string>
#include <unordered_map>
#include <vector>

namespace slimtrain::tokenize::detail {

/** @brief One SentencePiece processor. Methods return "" on success, else the error. */
class SentencePieceModule {
 public:
  virtual ~SentencePieceModule() = default;
  virtual std::string load(const std::string& model_bytes) = 0;
  /** @brief Trains on `texts` with trainer flags `spec`; on success loads the result too. */
  virtual std::string train(const std::vector<std::string>& texts,
                            const std::unordered_map<std::string, std::string>& spec,
                            std::string& model_bytes) = 0;
  virtual std::string encode(const std::string& text, std::vector<int>& ids) const = 0;
  virtual int piece_size() const = 0;
  virtual int pad_id() const = 0;
  virtual int unk_id() const = 0;
  virtual int piece_to_id(const std::string& piece) const = 0;
  virtual std::string id_to_piece(int id) const = 0;
};

/** @brief The module's one exported function (C linkage, found with dlsym). */
using MakeSentencePieceModule = SentencePieceModule* (*)();
inline constexpr const char* kMakeSentencePieceModule = "slimtrain_make_sentencepiece_module";

}  // namespace slimtrain::tokenize::detail
