#include "slimtrain/data/tokenizer.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/detail/sentencepiece_module.hpp"

namespace slimtrain::data {
namespace {

// The module beside the binary (an installed copy) or where this build put it.
std::vector<std::string> module_paths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SLIMTRAIN_SENTENCEPIECE_MODULE")) paths.emplace_back(env);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<std::size_t>(n));
    dir.resize(dir.rfind('/') + 1);
    paths.push_back(dir + "libslimtrain_sentencepiece.so");
  }
#ifdef SLIMTRAIN_SENTENCEPIECE_MODULE
  paths.emplace_back(SLIMTRAIN_SENTENCEPIECE_MODULE);
#endif
  return paths;
}

detail::MakeSentencePieceModule open_module() {
  static std::once_flag once;
  static detail::MakeSentencePieceModule make = nullptr;
  static std::string tried;
  std::call_once(once, [] {
  // Sanitizer runtimes refuse RTLD_DEEPBIND: there the module cannot be isolated.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    tried = "sanitizer builds cannot open SentencePiece isolated (RTLD_DEEPBIND)";
    return;
#endif
    for (const std::string& path : module_paths()) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!handle) {
        tried += "\n  " + path + ": " + dlerror();
        continue;
      }
      make = reinterpret_cast<detail::MakeSentencePieceModule>(
          dlsym(handle, detail::kMakeSentencePieceModule));
      if (make) return;
      tried += "\n  " + path + ": no " + detail::kMakeSentencePieceModule;
    }
  });
  if (!make)
    SLIMTRAIN_THROW(Error,
                    "SentencePiece (libslimtrain_sentencepiece.so) cannot be opened:", tried);
  return make;
}

}  // namespace

Tokenizer::Tokenizer() : processor_(open_module()()) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::string& model_bytes, const std::string& where) {
  Tokenizer t;
  const std::string error = t.processor_->load(model_bytes);
  if (!error.empty())
    SLIMTRAIN_THROW(DataError, where, ": not a SentencePiece model (", error, ")");
  t.bytes_ = model_bytes;
  return t;
}

Tokenizer Tokenizer::train(const std::vector<std::string>& texts,
                           const TokenizerTraining& options) {
  if (texts.empty()) SLIMTRAIN_THROW(DataError, "no training texts to train a tokenizer on");
  // pad 0 so that padded batches read as padding to any model; <sep> is a control piece: text
  // never encodes to it, only the joining of a pair does.
  const std::unordered_map<std::string, std::string> spec{
      {"vocab_size", std::to_string(options.vocab_size)},
      {"model_type", options.type},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"control_symbols", "<sep>"},
      {"num_threads", std::to_string(std::max(1, options.threads))},
      {"minloglevel", "2"}};
  Tokenizer t;
  const std::string error = t.processor_->train(texts, spec, t.bytes_);
  if (!error.empty()) {
    const std::size_t vocabulary = error.find("Vocabulary size");
    if (vocabulary != std::string::npos)
      SLIMTRAIN_THROW(ConfigError, "--vocab-size: ", options.vocab_size,
                      " is more than the training texts can fill (SentencePiece: ",
                      error.substr(vocabulary), ")");
    SLIMTRAIN_THROW(DataError, "training the tokenizer failed: ", error);
  }
  return t;
}

void Tokenizer::encode(const std::string& text, std::vector<std::int32_t>& ids) const {
  std::vector<int> piece_ids;
  const std::string error = processor_->encode(text, piece_ids);
  if (!error.empty()) SLIMTRAIN_THROW(DataError, "SentencePiece cannot encode: ", error);
  ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
}

std::int64_t Tokenizer::vocab_size() const {
  return processor_->piece_size();
}

std::int64_t Tokenizer::pad_id() const {
  return std::max(0, processor_->pad_id());
}

std::int64_t Tokenizer::separator_id() const {
  for (const char* piece : {"<sep>", "[SEP]", "</s>"}) {
    const int id = processor_->piece_to_id(piece);
    if (id >= 0 && id != processor_->unk_id() && processor_->id_to_piece(id) == piece) return id;
  }
  return -1;
}

}  // namespace slimtrain::data
