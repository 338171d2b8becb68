#include "slimtrain/tokenize/hf_tokenizer.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/tokenize/hf_added_tokens.hpp"
#include "slimtrain/tokenize/hf_model.hpp"
#include "slimtrain/tokenize/hf_normalizer.hpp"
#include "slimtrain/tokenize/hf_post_processor.hpp"
#include "slimtrain/tokenize/hf_pre_tokenizer.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize {

// The library's pipeline (tokenizer/mod.rs): added tokens found in the raw text, the rest
// normalized piece by piece and searched for the added tokens matched normalized, then cut by the
// pre-tokenizer and given to the model; the post-processor joins the texts with its tokens.
struct HfTokenizer::Impl {
  std::string where;
  std::string model_type;
  std::unique_ptr<hf::Model> model;
  hf::Normalizer normalizer;
  hf::PreTokenizer pre_tokenizer;
  hf::PostProcessor post;
  hf::AddedTokens added;
  std::int64_t vocab_size = 0, pad_id = 0;
  bool origin_matters = false;  // a Metaspace prepends at the input's first character only
  // Which tokenizer a thread's cache of words belongs to (an address can be reused; this not).
  const std::uint64_t serial = next_serial++;
  static std::atomic<std::uint64_t> next_serial;

  void encode_text(const std::string& text, std::vector<std::int32_t>& ids) const {
    if (text.empty()) return;
    hf::Pieces raw, pieces;
    hf::Piece whole;
    whole.text = hf::decode_utf8(text);
    whole.origin = origin_matters ? 1 : 0;  // else what the steps do to it costs for nothing
    if (added.any(false))
      added.split(std::move(whole), false, raw);
    else
      raw.push_back(std::move(whole));
    for (hf::Piece& piece : raw) {
      if (piece.token < 0) {
        piece.text = normalizer.apply(std::move(piece.text), piece.origin);
        if (piece.text.empty()) continue;
        if (added.any(true)) {
          added.split(std::move(piece), true, pieces);
          continue;
        }
      }
      pieces.push_back(std::move(piece));
    }
    pre_tokenizer.apply(pieces);
    for (const hf::Piece& piece : pieces) {
      if (piece.token >= 0)
        ids.push_back(piece.token);
      else if (!piece.text.empty())
        tokenize(piece.text, ids);
    }
  }

  // The model's ids for a piece, remembered: texts repeat their words (the library keeps a cache
  // of 10,000 words per thread for BPE too). One cache per thread, for the last tokenizer used.
  void tokenize(const std::u32string& word, std::vector<std::int32_t>& ids) const {
    constexpr std::size_t kWords = 10000, kLongest = 64;
    struct Cache {
      std::uint64_t owner = 0;
      std::unordered_map<std::u32string, std::vector<std::int32_t>> words;
    };
    thread_local Cache cache;
    if (cache.owner != serial) {
      cache.owner = serial;
      cache.words.clear();
    }
    const auto hit = cache.words.find(word);
    if (hit != cache.words.end()) {
      ids.insert(ids.end(), hit->second.begin(), hit->second.end());
      return;
    }
    const std::size_t before = ids.size();
    model->tokenize(word, ids);
    if (word.size() <= kLongest && cache.words.size() < kWords)
      cache.words.emplace(word, std::vector<std::int32_t>(ids.begin() + before, ids.end()));
  }
};

std::atomic<std::uint64_t> HfTokenizer::Impl::next_serial{1};

HfTokenizer::HfTokenizer() : impl_(std::make_unique<Impl>()) {}
HfTokenizer::HfTokenizer(HfTokenizer&&) noexcept = default;
HfTokenizer& HfTokenizer::operator=(HfTokenizer&&) noexcept = default;
HfTokenizer::~HfTokenizer() = default;

HfTokenizer HfTokenizer::parse(const std::string& text, const std::string& where) {
  try {
    return parse_json(text, where);
  } catch (const nlohmann::json::exception& e) {  // a field of another type than it should be
    SLIMTRAIN_THROW(ConfigError, where, ": ", e.what());
  }
}

HfTokenizer HfTokenizer::parse_json(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, where, ": is not JSON: ", e.what());
  }
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
    SLIMTRAIN_THROW(ConfigError, where, ": is not a tokenizer.json (no \"model\" object)");
  if (j.contains("version") && j["version"] != "1.0")
    SLIMTRAIN_THROW(ConfigError, where, ": version ", j["version"].dump(),
                    " is not one the tokenizers library reads (1.0)");
  HfTokenizer t;
  Impl& m = *t.impl_;
  m.where = where;
  m.model = hf::parse_model(j["model"], where, m.model_type);
  m.normalizer = hf::parse_normalizer(j.value("normalizer", nlohmann::json()), where);
  m.pre_tokenizer = hf::parse_pre_tokenizer(j.value("pre_tokenizer", nlohmann::json()), where);
  m.origin_matters = m.pre_tokenizer.prepends_first();
  m.post = hf::PostProcessor::parse(j.value("post_processor", nlohmann::json()), where);
  m.added =
      hf::AddedTokens(j.value("added_tokens", nlohmann::json()), *m.model, m.normalizer, where);
  m.vocab_size = std::max(m.model->max_id(), m.added.max_id()) + 1;
  const nlohmann::json padding = j.value("padding", nlohmann::json());
  m.pad_id = -1;
  if (padding.is_object() && padding.contains("pad_id") && padding["pad_id"].is_number_unsigned())
    m.pad_id = padding["pad_id"].get<std::int64_t>();
  for (const char* pad : {"[PAD]", "<pad>", "<|endoftext|>"}) {
    if (m.pad_id >= 0) break;
    m.pad_id = m.added.id_of(pad) >= 0 ? m.added.id_of(pad) : m.model->id_of(pad);
  }
  if (m.pad_id < 0 || m.pad_id >= m.vocab_size) m.pad_id = 0;
  return t;
}

std::vector<std::int32_t> HfTokenizer::encode_plain(const std::string& text) const {
  std::vector<std::int32_t> ids;
  impl_->encode_text(text, ids);
  return ids;
}

std::vector<std::int32_t> HfTokenizer::encode(const std::vector<std::string>& texts,
                                              std::int64_t max_length, std::int64_t& full_length,
                                              std::vector<std::int32_t>* types) const {
  std::vector<std::vector<std::int32_t>> parts(texts.size());
  full_length = impl_->post.added(texts.size() > 1);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    impl_->encode_text(texts[i], parts[i]);
    full_length += static_cast<std::int64_t>(parts[i].size());
  }
  impl_->post.truncate(parts, max_length);
  return impl_->post.join(parts, types);
}

std::int64_t HfTokenizer::vocab_size() const {
  return impl_->vocab_size;
}
std::int64_t HfTokenizer::pad_id() const {
  return impl_->pad_id;
}
std::int64_t HfTokenizer::type_count() const {
  return impl_->post.type_count();
}
bool HfTokenizer::joins_pairs() const {
  return impl_->post.adds_tokens();
}

std::string HfTokenizer::describe() const {
  std::ostringstream out;
  out << impl_->model_type << ", " << impl_->vocab_size << " ids";
  if (!impl_->normalizer.type.empty()) out << ", " << impl_->normalizer.type;
  if (!impl_->pre_tokenizer.type.empty()) out << ", " << impl_->pre_tokenizer.type;
  if (!impl_->post.type().empty()) out << ", " << impl_->post.type();
  return out.str();
}

namespace {

// A JSON file beside the tokenizer.json, or null when absent or not JSON (a hint, not a need).
nlohmann::json read_beside(const std::string& tokenizer_json, const char* name,
                           std::filesystem::path& path) {
  path = std::filesystem::path(tokenizer_json).parent_path() / name;
  std::ifstream in(path);
  if (!in) return nlohmann::json();
  return nlohmann::json::parse(in, nullptr, false);
}

}  // namespace

bool hf_pair_types(const std::string& tokenizer_json, std::int64_t type_count) {
  std::filesystem::path path;
  const nlohmann::json model = read_beside(tokenizer_json, "config.json", path);
  if (!model.is_object()) {
    if (type_count > 1 && process_rank() <= 0)
      log::warn("prep text: no config.json beside --tokenizer ", tokenizer_json,
                ": pairs get no token_type_ids (every token of type 0); copy the checkpoint's "
                "config.json there if its model reads token types (BERT's do)");
    return false;
  }
  const auto it = model.find("type_vocab_size");
  const std::int64_t types =
      it != model.end() && it->is_number_integer() ? it->get<std::int64_t>() : 1;
  if (types < 2) return false;
  if (type_count > types)
    SLIMTRAIN_THROW(ConfigError, "--tokenizer ", tokenizer_json,
                    ": its pair template gives token types up to ", type_count - 1, ", past ",
                    path.string(), "'s type_vocab_size ", types);
  log::info_rank0("prep text: pairs get token_type_ids beside input_ids (", path.string(),
                  ": type_vocab_size ", types, ")");
  return true;
}

std::int64_t hf_default_max_length(
    const std::string& tokenizer_json, std::string& source,
    const std::function<std::int64_t(const nlohmann::json& config)>& positions) {
  std::filesystem::path config_path, model_path;
  const nlohmann::json config = read_beside(tokenizer_json, "tokenizer_config.json", config_path);
  constexpr std::int64_t kNoLimit = std::int64_t{1} << 30;
  if (config.is_object() && config.contains("model_max_length") &&
      config["model_max_length"].is_number_integer()) {
    const auto n = config["model_max_length"].get<std::int64_t>();
    if (n > 0 && n < kNoLimit) {
      source = config_path.string() + " (model_max_length)";
      return n;
    }
  }
  const nlohmann::json model = read_beside(tokenizer_json, "config.json", model_path);
  if (model.is_object()) {
    const std::int64_t n = positions(model);
    if (n > 0) {
      source = model_path.string() + " (max_position_embeddings)";
      return n;
    }
  }
  return 0;
}

}  // namespace slimtrain::tokenize
