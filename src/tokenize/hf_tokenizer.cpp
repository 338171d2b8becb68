#include "slimtrain/tokenize/hf_tokenizer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/tokenize/hf_steps.hpp"
#include "slimtrain/tokenize/hf_unicode.hpp"

namespace slimtrain::tokenize {
namespace {

struct AddedToken {
  std::string content;
  std::int32_t id = 0;
  bool lstrip = false, rstrip = false;  // whitespace before (after) it is part of the match
};

// Bytes of the whitespace characters `text` ends with (begins with, from `at`).
std::size_t trailing_space(const std::string& text) {
  const std::u32string code = hf::decode_utf8(text);
  std::size_t n = code.size();
  while (n > 0 && hf::is_whitespace(code[n - 1])) --n;
  return text.size() - hf::encode_utf8(code.substr(0, n)).size();
}
std::size_t leading_space(const std::string& text, std::size_t at) {
  const std::u32string code = hf::decode_utf8(text.substr(at, 64));
  std::size_t n = 0;
  while (n < code.size() && hf::is_whitespace(code[n])) ++n;
  return hf::encode_utf8(code.substr(0, n)).size();
}

// One element of a template: a special token's ids, or sequence A (0) or B (1), and the token
// type its tokens get (BERT's segment: 1 for B and the [SEP] after it).
struct Piece {
  int sequence = -1;
  std::vector<std::int32_t> ids;
  std::int32_t type_id = 0;
};

std::int32_t token_id(const nlohmann::json& j, const std::string& where) {
  if (!j.is_number_integer() || j.get<std::int64_t>() < 0 || j.get<std::int64_t>() > INT32_MAX)
    SLIMTRAIN_THROW(ConfigError, where, ": a token id ", j.dump(), " is not a valid id");
  return j.get<std::int32_t>();
}

std::vector<Piece> parse_template(const nlohmann::json& items, const nlohmann::json& specials,
                                  const std::string& where) {
  std::vector<Piece> out;
  if (!items.is_array()) SLIMTRAIN_THROW(ConfigError, where, ": a template that is not a list");
  for (const auto& item : items) {
    Piece p;
    if (item.contains("Sequence")) {
      p.sequence = item["Sequence"].value("id", std::string("A")) == "B" ? 1 : 0;
      p.type_id = token_id(item["Sequence"].value("type_id", 0), where);
    } else if (item.contains("SpecialToken")) {
      const std::string name = item["SpecialToken"].value("id", std::string());
      p.type_id = token_id(item["SpecialToken"].value("type_id", 0), where);
      if (!specials.contains(name) || !specials[name].contains("ids"))
        SLIMTRAIN_THROW(ConfigError, where, ": the template's special token \"", name,
                        "\" is not in special_tokens");
      for (const auto& id : specials[name]["ids"]) p.ids.push_back(token_id(id, where));
    } else {
      SLIMTRAIN_THROW(ConfigError, where, ": a template item ", item.dump(), " is not understood");
    }
    out.push_back(std::move(p));
  }
  return out;
}

Piece special(const nlohmann::json& pair, const std::string& where, std::int32_t type_id = 0) {
  // BertProcessing and RobertaProcessing give a token as ["[SEP]", 102].
  if (!pair.is_array() || pair.size() != 2)
    SLIMTRAIN_THROW(ConfigError, where, ": a special token ", pair.dump(), " is not [text, id]");
  Piece p;
  p.ids.push_back(token_id(pair[1], where));
  p.type_id = type_id;
  return p;
}

Piece sequence(int which, std::int32_t type_id) {
  Piece p;
  p.sequence = which;
  p.type_id = type_id;
  return p;
}

}  // namespace

struct HfTokenizer::Impl {
  std::string where;
  std::vector<AddedToken> added;  // longest content first
  hf::Normalizer normalizer;
  hf::PreTokenizer pre_tokenizer;
  std::unique_ptr<hf::Model> model;
  std::string model_type;
  std::string post_type;
  std::vector<Piece> single, pair;
  std::int64_t vocab_size = 0, pad_id = 0;

  void encode_segment(const std::string& text, std::vector<std::int32_t>& ids) const {
    if (text.empty()) return;
    const std::u32string normal = normalizer.apply(hf::decode_utf8(text));
    for (const std::u32string& word : pre_tokenizer.apply({normal}))
      if (!word.empty()) model->tokenize(word, ids);
  }
};

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
  HfTokenizer t;
  Impl& m = *t.impl_;
  m.where = where;
  const std::string model_type = j["model"].value("type", std::string("(none)"));
  if (model_type == "WordPiece")
    m.model = std::make_unique<hf::WordPiece>(j["model"], where);
  else if (model_type == "BPE")
    m.model = std::make_unique<hf::Bpe>(j["model"], where);
  else if (model_type == "Unigram")
    m.model = std::make_unique<hf::Unigram>(j["model"], where);
  else
    SLIMTRAIN_THROW(ConfigError, where, ": model ", model_type,
                    " is not implemented (WordPiece, BPE and Unigram)");
  m.model_type = model_type;
  m.vocab_size = m.model->max_id() + 1;
  m.normalizer = hf::parse_normalizer(j.value("normalizer", nlohmann::json()), where);
  m.pre_tokenizer = hf::parse_pre_tokenizer(j.value("pre_tokenizer", nlohmann::json()), where);
  if (j.contains("added_tokens") && j["added_tokens"].is_array())
    for (const auto& a : j["added_tokens"]) {
      AddedToken token{a.value("content", std::string()), token_id(a.value("id", -1), where),
                       a.value("lstrip", false), a.value("rstrip", false)};
      if (token.content.empty()) continue;
      m.vocab_size = std::max<std::int64_t>(m.vocab_size, token.id + 1);
      m.added.push_back(token);
    }
  std::stable_sort(m.added.begin(), m.added.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });
  for (const char* pad : {"[PAD]", "<pad>", "<|endoftext|>"}) {
    const std::int64_t id = m.model->id_of(pad);
    if (id >= 0) {
      m.pad_id = id;
      break;
    }
  }
  nlohmann::json post = j.value("post_processor", nlohmann::json());
  if (post.is_object() && post.value("type", std::string()) == "Sequence") {
    // Llama 3's: ByteLevel (offsets only) and a template: the one that adds tokens counts.
    nlohmann::json kept;
    for (const auto& p : post.value("processors", nlohmann::json::array()))
      if (p.value("type", std::string()) != "ByteLevel") kept = p;
    post = kept;
  }
  if (post.is_object() && post.value("type", std::string()) == "ByteLevel") post = nullptr;
  if (!post.is_null()) {
    m.post_type = post.value("type", std::string("(none)"));
    if (m.post_type == "TemplateProcessing") {
      const nlohmann::json specials = post.value("special_tokens", nlohmann::json::object());
      m.single = parse_template(post.value("single", nlohmann::json()), specials, where);
      m.pair = parse_template(post.value("pair", nlohmann::json()), specials, where);
    } else if (m.post_type == "BertProcessing") {
      const Piece cls = special(post.value("cls", nlohmann::json()), where);
      const Piece sep = special(post.value("sep", nlohmann::json()), where);
      const Piece second_sep = special(post.value("sep", nlohmann::json()), where, 1);
      m.single = {cls, sequence(0, 0), sep};
      m.pair = {cls, sequence(0, 0), sep, sequence(1, 1), second_sep};
    } else if (m.post_type == "RobertaProcessing") {  // one token type for both texts
      const Piece cls = special(post.value("cls", nlohmann::json()), where);
      const Piece sep = special(post.value("sep", nlohmann::json()), where);
      m.single = {cls, sequence(0, 0), sep};
      m.pair = {cls, sequence(0, 0), sep, sep, sequence(1, 0), sep};
    } else {
      SLIMTRAIN_THROW(ConfigError, where, ": post_processor ", m.post_type,
                      " is not implemented (TemplateProcessing, BertProcessing, "
                      "RobertaProcessing)");
    }
  }
  return t;
}

std::vector<std::int32_t> HfTokenizer::encode_plain(const std::string& text) const {
  // Added tokens are found in the raw text first, the longest at each place; the rest between
  // them goes through the normalizer, pre-tokenizer and model.
  std::vector<std::int32_t> ids;
  std::size_t start = 0, segment = 0;
  while (start < text.size()) {
    const AddedToken* hit = nullptr;
    for (const AddedToken& a : impl_->added)
      if (text.compare(start, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    if (hit == nullptr) {
      ++start;
      continue;
    }
    std::string before = text.substr(segment, start - segment);
    if (hit->lstrip) before.resize(before.size() - trailing_space(before));
    impl_->encode_segment(before, ids);
    ids.push_back(hit->id);
    start += hit->content.size();
    while (hit->rstrip && start < text.size()) {  // 64 bytes at a time: runs of any length
      const std::size_t space = leading_space(text, start);
      start += space;
      if (space == 0) break;
    }
    segment = start;
  }
  impl_->encode_segment(text.substr(segment), ids);
  return ids;
}

std::vector<std::int32_t> HfTokenizer::encode(const std::vector<std::string>& texts,
                                              std::int64_t max_length, std::int64_t& full_length,
                                              std::vector<std::int32_t>* types) const {
  std::vector<std::vector<std::int32_t>> parts;
  for (const std::string& t : texts) parts.push_back(encode_plain(t));
  const std::vector<Piece>& plan = parts.size() > 1 ? impl_->pair : impl_->single;
  std::int64_t specials = 0;
  for (const Piece& p : plan) specials += static_cast<std::int64_t>(p.ids.size());
  auto total = [&] {
    std::int64_t n = 0;
    for (const auto& part : parts) n += static_cast<std::int64_t>(part.size());
    return n;
  };
  full_length = total() + specials;
  if (max_length > 0) {
    const std::int64_t budget = std::max<std::int64_t>(0, max_length - specials);
    if (parts.size() == 1 && total() > budget) {
      parts[0].resize(static_cast<std::size_t>(budget));
    } else if (parts.size() == 2 && total() > budget) {
      // Longest first, as the tokenizers library: the shorter keeps up to half the budget, the
      // longer (the first on a tie) the rest.
      const std::size_t longer = parts[0].size() >= parts[1].size() ? 0 : 1;
      auto& shorter_part = parts[1 - longer];
      const auto half = static_cast<std::size_t>(budget / 2);
      if (shorter_part.size() > half) shorter_part.resize(half);
      parts[longer].resize(static_cast<std::size_t>(budget) - shorter_part.size());
    }
  }
  std::vector<std::int32_t> out;
  if (types != nullptr) types->clear();
  auto add = [&](const std::vector<std::int32_t>& ids, std::int32_t type_id) {
    out.insert(out.end(), ids.begin(), ids.end());
    if (types != nullptr) types->insert(types->end(), ids.size(), type_id);
  };
  if (plan.empty()) {  // no post-processor: the texts one after the other, types 0 and 1
    for (std::size_t i = 0; i < parts.size(); ++i) add(parts[i], static_cast<std::int32_t>(i));
    return out;
  }
  for (const Piece& p : plan) {
    if (p.sequence < 0)
      add(p.ids, p.type_id);
    else if (static_cast<std::size_t>(p.sequence) < parts.size())
      add(parts[static_cast<std::size_t>(p.sequence)], p.type_id);
  }
  return out;
}

std::int64_t HfTokenizer::vocab_size() const {
  return impl_->vocab_size;
}
std::int64_t HfTokenizer::pad_id() const {
  return impl_->pad_id;
}
std::int64_t HfTokenizer::type_count() const {
  std::int64_t n = 1;
  for (const Piece& p : impl_->pair) n = std::max<std::int64_t>(n, p.type_id + 1);
  return impl_->pair.empty() ? 2 : n;  // no template: A and B are types 0 and 1
}
bool HfTokenizer::joins_pairs() const {
  return !impl_->pair.empty();
}

std::string HfTokenizer::describe() const {
  std::ostringstream out;
  out << impl_->model_type << ", " << impl_->vocab_size << " ids";
  if (!impl_->normalizer.type.empty()) out << ", " << impl_->normalizer.type;
  if (!impl_->pre_tokenizer.type.empty()) out << ", " << impl_->pre_tokenizer.type;
  if (!impl_->post_type.empty()) out << ", " << impl_->post_type;
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
