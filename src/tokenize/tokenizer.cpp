#include "slimtrain/tokenize/tokenizer.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/detail/sentencepiece_module.hpp"
#include "slimtrain/tokenize/hf_tokenizer.hpp"

namespace slimtrain::tokenize {
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
Tokenizer::Tokenizer(std::unique_ptr<HfTokenizer> hf) : hf_(std::move(hf)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::string& model_bytes, const std::string& where) {
  const std::size_t first = model_bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && model_bytes[first] == '{') {  // a tokenizer.json
    Tokenizer t(std::make_unique<HfTokenizer>(HfTokenizer::parse(model_bytes, where)));
    t.bytes_ = model_bytes;
    return t;
  }
  Tokenizer t;
  const std::string error = t.processor_->load(model_bytes);
  if (!error.empty())
    SLIMTRAIN_THROW(DataError, where, ": not a SentencePiece model (", error, ")");
  t.bytes_ = model_bytes;
  return t;
}

namespace {

// Where the piece of `text` that starts at `at` ends, for pieces of at most `limit` bytes: at the
// last space before the limit, else at the last character's edge (never inside a UTF-8 sequence).
std::size_t piece_end(const std::string& text, std::size_t at, std::size_t limit) {
  if (text.size() - at <= limit) return text.size();
  std::size_t cut = text.rfind(' ', at + limit);
  if (cut != std::string::npos && cut > at) return cut;
  cut = at + limit;
  while (cut > at && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut == at ? at + limit : cut;
}

// Calls `use` with each piece of `text` of at most `limit` bytes, the spaces between dropped.
template <typename Use>
void for_each_piece(const std::string& text, std::size_t limit, Use use) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = piece_end(text, at, limit);
    use(text.substr(at, end - at));
    at = end;
    while (at < text.size() && text[at] == ' ') ++at;
  }
}

// The number after `marker` in SentencePiece's message, or -1.
std::int64_t number_after(const std::string& error, const std::string& marker) {
  const std::size_t at = error.find(marker);
  if (at == std::string::npos) return -1;
  try {
    return std::stoll(error.substr(at + marker.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

// SentencePiece's reason without its source location: "Internal: ./src/x.cc(660) [check] why".
std::string reason_of(const std::string& error) {
  const std::size_t bracket = error.find("] ");
  return bracket == std::string::npos ? error : error.substr(bracket + 2);
}

}  // namespace

Tokenizer Tokenizer::train(const std::vector<std::string>& texts,
                           const TokenizerTraining& options) {
  std::vector<std::string> pieces;
  std::size_t bytes = 0;
  for (const std::string& text : texts) {
    for_each_piece(text, kTrainingPieceBytes,
                   [&](std::string piece) { pieces.push_back(std::move(piece)); });
    bytes += text.size();
  }
  if (pieces.empty()) SLIMTRAIN_THROW(DataError, "no training texts to train a tokenizer on");
  if (bytes > kTrainingSampleBytes) {
    // Every k-th piece, k as the bytes exceed the budget (rounded up).
    const std::size_t k = (bytes + kTrainingSampleBytes - 1) / kTrainingSampleBytes;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pieces.size(); i += k) pieces[kept++] = std::move(pieces[i]);
    pieces.resize(kept);
  }
  // pad 0 so that padded batches read as padding to any model; <sep> is a control piece: text
  // never encodes to it, only the joining of a pair does. --vocab-size 0: a soft limit, which
  // SentencePiece fills as far as the texts allow.
  const bool automatic = options.vocab_size == 0;
  const std::unordered_map<std::string, std::string> spec{
      {"vocab_size", std::to_string(automatic ? kAutoVocabulary : options.vocab_size)},
      {"hard_vocab_limit", automatic ? "false" : "true"},
      {"model_type", options.type},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"control_symbols", "<sep>"},
      {"num_threads", std::to_string(std::max(1, options.threads))},
      {"minloglevel", "2"}};
  Tokenizer t;
  const std::string error = t.processor_->train(pieces, spec, t.bytes_);
  if (error.empty()) return t;
  const std::int64_t most = number_after(error, "Please set it to a value <= ");
  if (most >= 0)
    SLIMTRAIN_THROW(ConfigError, "--vocab-size: ", options.vocab_size,
                    " is more than the training texts can fill: they fill at most ", most,
                    " pieces; give at most that, or --vocab-size 0 to size it from the texts");
  const std::int64_t least = number_after(error, " vs ");
  if (error.find("smaller than required_chars") != std::string::npos)
    SLIMTRAIN_THROW(ConfigError, "--vocab-size: ", options.vocab_size,
                    " is too small: the training texts hold more distinct characters than that",
                    least > 0
                        ? slimtrain::detail::concat(" (", least, " pieces with the special ones)")
                        : std::string(),
                    "; give at least ", least > 0 ? least : options.vocab_size + 1,
                    ", or --vocab-size 0 to size it from the texts");
  SLIMTRAIN_THROW(DataError, "training the tokenizer failed: ", reason_of(error));
}

void Tokenizer::encode(const std::string& text, std::vector<std::int32_t>& ids) const {
  if (hf_) {
    const std::vector<std::int32_t> mine = hf_->encode_plain(text);
    ids.insert(ids.end(), mine.begin(), mine.end());
    return;
  }
  // A long text in pieces cut at spaces: SentencePiece's pieces never span a space, so the ids
  // are the same, and its lattice stays the size of a piece (a 50 MB text took 2.9 GB whole).
  std::vector<int> piece_ids;
  for_each_piece(text, kEncodePieceBytes, [&](const std::string& piece) {
    const std::string error = processor_->encode(piece, piece_ids);
    if (!error.empty()) SLIMTRAIN_THROW(DataError, "SentencePiece cannot encode: ", error);
    ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
  });
}

std::int64_t Tokenizer::encode_record(const std::vector<std::string>& texts,
                                      std::int64_t max_length, std::vector<std::int32_t>& ids,
                                      std::vector<std::int32_t>* types) const {
  if (hf_) {
    std::int64_t full = 0;
    std::vector<std::int32_t> mine_types;
    const std::vector<std::int32_t> mine =
        hf_->encode(texts, max_length, full, types ? &mine_types : nullptr);
    ids.insert(ids.end(), mine.begin(), mine.end());
    if (types) types->insert(types->end(), mine_types.begin(), mine_types.end());
    return full;
  }
  if (types) SLIMTRAIN_THROW(Error, "token types come from a tokenizer.json's post-processor");
  const std::size_t before = ids.size();
  for (std::size_t t = 0; t < texts.size(); ++t) {
    if (t > 0) ids.push_back(static_cast<std::int32_t>(separator_id()));
    encode(texts[t], ids);
  }
  const auto full = static_cast<std::int64_t>(ids.size() - before);
  if (max_length > 0 && full > max_length)
    ids.resize(before + static_cast<std::size_t>(max_length));
  return full;
}

std::int64_t Tokenizer::type_count() const {
  return hf_ ? hf_->type_count() : 1;
}

bool Tokenizer::joins_pairs() const {
  return hf_ ? hf_->joins_pairs() : separator_id() >= 0;
}

std::string Tokenizer::kind() const {
  return hf_ ? "huggingface" : "sentencepiece";
}

std::int64_t Tokenizer::vocab_size() const {
  return hf_ ? hf_->vocab_size() : processor_->piece_size();
}

std::int64_t Tokenizer::pad_id() const {
  return hf_ ? hf_->pad_id() : std::max(0, processor_->pad_id());
}

std::int64_t Tokenizer::separator_id() const {
  if (hf_) return -1;
  for (const char* piece : {"<sep>", "[SEP]", "</s>"}) {
    const int id = processor_->piece_to_id(piece);
    if (id >= 0 && id != processor_->unk_id() && processor_->id_to_piece(id) == piece) return id;
  }
  return -1;
}

}  // namespace slimtrain::tokenize
