// The post-processors as the tokenizers library runs them (processors/*.rs, utils/truncation.rs):
// each that adds tokens is a template of special tokens and the texts; ByteLevel's trims offsets
// only, so here it is nothing.
#include "slimtrain/tokenize/hf_post_processor.hpp"

#include <algorithm>

#include "slimtrain/core/error.hpp"

namespace slimtrain::tokenize::hf {
namespace {

using Element = PostProcessor::Element;

std::int32_t token_id(const nlohmann::json& j, const std::string& where) {
  if (!j.is_number_integer() || j.get<std::int64_t>() < 0 || j.get<std::int64_t>() > INT32_MAX)
    SLIMTRAIN_THROW(ConfigError, where, ": a token id ", j.dump(), " is not a valid id");
  return j.get<std::int32_t>();
}

std::vector<Element> parse_template(const nlohmann::json& items, const nlohmann::json& specials,
                                    const std::string& where) {
  std::vector<Element> out;
  if (!items.is_array()) SLIMTRAIN_THROW(ConfigError, where, ": a template that is not a list");
  for (const auto& item : items) {
    Element e;
    if (item.contains("Sequence")) {
      e.sequence = item["Sequence"].value("id", std::string("A")) == "B" ? 1 : 0;
      e.type_id = token_id(item["Sequence"].value("type_id", 0), where);
    } else if (item.contains("SpecialToken")) {
      const std::string name = item["SpecialToken"].value("id", std::string());
      e.type_id = token_id(item["SpecialToken"].value("type_id", 0), where);
      if (!specials.contains(name) || !specials[name].contains("ids"))
        SLIMTRAIN_THROW(ConfigError, where, ": the template's special token \"", name,
                        "\" is not in special_tokens");
      for (const auto& id : specials[name]["ids"]) e.ids.push_back(token_id(id, where));
    } else {
      SLIMTRAIN_THROW(ConfigError, where, ": a template item ", item.dump(), " is not understood");
    }
    out.push_back(std::move(e));
  }
  return out;
}

Element special(const nlohmann::json& pair, const std::string& where, std::int32_t type_id = 0) {
  // BertProcessing and RobertaProcessing give a token as ["[SEP]", 102].
  if (!pair.is_array() || pair.size() != 2)
    SLIMTRAIN_THROW(ConfigError, where, ": a special token ", pair.dump(), " is not [text, id]");
  Element e;
  e.ids.push_back(token_id(pair[1], where));
  e.type_id = type_id;
  return e;
}

Element text(int which, std::int32_t type_id) {
  Element e;
  e.sequence = which;
  e.type_id = type_id;
  return e;
}

// A section without "type" (older files): the library tries RobertaProcessing, whose fields are
// BertProcessing's and two more, then BertProcessing.
std::string type_of(const nlohmann::json& j) {
  if (j.contains("type") && j["type"].is_string()) return j["type"].get<std::string>();
  if (j.contains("sep") && j.contains("cls"))
    return j.contains("trim_offsets") && j.contains("add_prefix_space") ? "RobertaProcessing"
                                                                        : "BertProcessing";
  return "(none)";
}

}  // namespace

PostProcessor PostProcessor::parse(const nlohmann::json& j, const std::string& where) {
  PostProcessor p;
  if (j.is_null()) return p;
  if (!j.is_object()) SLIMTRAIN_THROW(ConfigError, where, ": the post_processor is not an object");
  p.type_ = type_of(j);
  if (p.type_ == "Sequence") {
    if (!j.contains("processors") || !j["processors"].is_array())
      SLIMTRAIN_THROW(ConfigError, where, ": a Sequence post_processor without \"processors\"");
    // Llama 3's: ByteLevel (offsets only), then a template. Templates chained one after the
    // other make the library fail (a template of more than two parts), so one adds tokens.
    for (const auto& step : j["processors"]) {
      const PostProcessor inner = parse(step, where);
      if (inner.adds_tokens() && p.adds_tokens())
        SLIMTRAIN_THROW(ConfigError, where,
                        ": a Sequence post_processor with more than one that "
                        "adds special tokens (the tokenizers library fails on it)");
      if (inner.adds_tokens()) {
        p.single_ = inner.single_;
        p.pair_ = inner.pair_;
      }
    }
  } else if (p.type_ == "TemplateProcessing") {
    const nlohmann::json specials = j.value("special_tokens", nlohmann::json::object());
    p.single_ = parse_template(j.value("single", nlohmann::json()), specials, where);
    p.pair_ = parse_template(j.value("pair", nlohmann::json()), specials, where);
  } else if (p.type_ == "BertProcessing") {
    const Element cls = special(j.value("cls", nlohmann::json()), where);
    const Element sep = special(j.value("sep", nlohmann::json()), where);
    const Element second_sep = special(j.value("sep", nlohmann::json()), where, 1);
    p.single_ = {cls, text(0, 0), sep};
    p.pair_ = {cls, text(0, 0), sep, text(1, 1), second_sep};
  } else if (p.type_ == "RobertaProcessing") {  // one token type for both texts
    const Element cls = special(j.value("cls", nlohmann::json()), where);
    const Element sep = special(j.value("sep", nlohmann::json()), where);
    p.single_ = {cls, text(0, 0), sep};
    p.pair_ = {cls, text(0, 0), sep, sep, text(1, 0), sep};
  } else if (p.type_ != "ByteLevel") {
    SLIMTRAIN_THROW(ConfigError, where, ": post_processor ", p.type_,
                    " is not one the tokenizers library has (TemplateProcessing, BertProcessing, "
                    "RobertaProcessing, ByteLevel, Sequence)");
  }
  return p;
}

std::int64_t PostProcessor::added(bool pair) const {
  std::int64_t n = 0;
  for (const Element& e : pair ? pair_ : single_) n += static_cast<std::int64_t>(e.ids.size());
  return n;
}

std::int64_t PostProcessor::type_count() const {
  if (pair_.empty()) return 2;  // A and B are types 0 and 1
  std::int64_t n = 1;
  for (const Element& e : pair_) n = std::max<std::int64_t>(n, e.type_id + 1);
  return n;
}

void PostProcessor::truncate(std::vector<std::vector<std::int32_t>>& parts,
                             std::int64_t max_length) const {
  if (max_length <= 0 || parts.empty()) return;
  const bool pair = parts.size() > 1;
  // The library would not cut at all (its count wraps around): a length no sample can have.
  if (max_length < added(pair))
    SLIMTRAIN_THROW(ConfigError, "--max-length ", max_length, " is less than the ", added(pair),
                    " special tokens the tokenizer adds to ", pair ? "a pair" : "a text");
  const auto budget = static_cast<std::size_t>(max_length - added(pair));
  std::size_t total = 0;
  for (const auto& part : parts) total += part.size();
  if (total <= budget) return;
  if (!pair) {
    parts[0].resize(budget);
    return;
  }
  // n1 the shorter (the first on a tie), kept whole when the longer can take the rest; else
  // half each, the odd one to n2.
  const bool swap = parts[0].size() > parts[1].size();
  std::size_t n1 = std::min(parts[0].size(), parts[1].size());
  std::size_t n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
  if (n1 + n2 > budget) {
    n1 = budget / 2;
    n2 = n1 + budget % 2;
  }
  if (swap) std::swap(n1, n2);
  parts[0].resize(std::min(parts[0].size(), n1));
  parts[1].resize(std::min(parts[1].size(), n2));
}

std::vector<std::int32_t> PostProcessor::join(const std::vector<std::vector<std::int32_t>>& parts,
                                              std::vector<std::int32_t>* types) const {
  std::vector<std::int32_t> out;
  if (types != nullptr) types->clear();
  auto add = [&](const std::vector<std::int32_t>& ids, std::int32_t type_id) {
    out.insert(out.end(), ids.begin(), ids.end());
    if (types != nullptr) types->insert(types->end(), ids.size(), type_id);
  };
  const std::vector<Element>& plan = parts.size() > 1 ? pair_ : single_;
  if (plan.empty()) {  // none that adds tokens: the texts one after the other, types 0 and 1
    for (std::size_t i = 0; i < parts.size(); ++i) add(parts[i], static_cast<std::int32_t>(i));
    return out;
  }
  for (const Element& e : plan) {
    if (e.sequence < 0)
      add(e.ids, e.type_id);
    else if (static_cast<std::size_t>(e.sequence) < parts.size())
      add(parts[static_cast<std::size_t>(e.sequence)], e.type_id);
  }
  return out;
}

}  // namespace slimtrain::tokenize::hf
