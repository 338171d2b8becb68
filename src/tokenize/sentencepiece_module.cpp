// libslimtrain_sentencepiece.so: SentencePiece behind detail::SentencePieceModule. Built as a
// module of its own and opened with dlopen (see sentencepiece_module.hpp for why).
#include "slimtrain/tokenize/detail/sentencepiece_module.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

namespace slimtrain::tokenize::detail {
namespace {

// Hands the trainer the texts one by one, without a file on disk.
class Texts : public sentencepiece::SentenceIterator {
 public:
  explicit Texts(const std::vector<std::string>& texts) : texts_(texts) {}
  bool done() const override { return next_ >= texts_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return texts_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& texts_;
  std::size_t next_ = 0;
};

std::string text_of(const sentencepiece::util::Status& status) {
  return status.ok() ? std::string() : status.ToString();
}

class Module : public SentencePieceModule {
 public:
  std::string load(const std::string& model_bytes) override {
    return text_of(processor_.LoadFromSerializedProto(model_bytes));
  }
  std::string train(const std::vector<std::string>& texts,
                    const std::unordered_map<std::string, std::string>& spec,
                    std::string& model_bytes) override {
    Texts iterator(texts);
    const std::string error =
        text_of(sentencepiece::SentencePieceTrainer::Train(spec, &iterator, &model_bytes));
    return error.empty() ? load(model_bytes) : error;
  }
  std::string encode(const std::string& text, std::vector<int>& ids) const override {
    return text_of(processor_.Encode(text, &ids));
  }
  int piece_size() const override { return processor_.GetPieceSize(); }
  int pad_id() const override { return processor_.pad_id(); }
  int unk_id() const override { return processor_.unk_id(); }
  int piece_to_id(const std::string& piece) const override { return processor_.PieceToId(piece); }
  std::string id_to_piece(int id) const override { return processor_.IdToPiece(id); }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace
}  // namespace slimtrain::tokenize::detail

extern "C" __attribute__((visibility("default"))) slimtrain::tokenize::detail::SentencePieceModule*
slimtrain_make_sentencepiece_module() {
  return new slimtrain::tokenize::detail::Module();
}
