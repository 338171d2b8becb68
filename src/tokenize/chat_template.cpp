#include "slimtrain/tokenize/chat_template.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/detail/chat_template_lexer.hpp"
#include "slimtrain/tokenize/detail/chat_template_parser.hpp"
#include "slimtrain/tokenize/detail/chat_template_render.hpp"

namespace slimtrain::tokenize {
namespace chat {
namespace {

namespace fs = std::filesystem;

// A message as transformers hands it to the template: {"role": ..., "content": "..."} or
// {"role": ..., "content": [{"type": "image"}, {"type": "text", "text": ...}]}.
Value message_value(const ChatMessage& m) {
  ValueDict message{{"role", Value::of(m.role)}};
  if (m.content_string) {
    message.emplace_back("content", Value::of(*m.content_string));
  } else {
    ValueList parts;
    for (const ChatPart& p : m.content) {
      ValueDict part{{"type", Value::of(p.type)}};
      if (p.type == "text") part.emplace_back("text", Value::of(p.text));
      parts.push_back(Value::of(std::move(part)));
    }
    message.emplace_back("content", Value::of(std::move(parts)));
  }
  return Value::of(std::move(message));
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<nlohmann::json> read_json(const fs::path& path) {
  const std::optional<std::string> text = read_file(path);
  if (!text) return std::nullopt;
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, path.string(), " is not JSON: ", e.what());
  }
}

// tokenizer_config.json's chat_template: a string, or [{"name": ..., "template": ...}, ...]
// of which transformers renders "default" when no tools are given.
std::string template_of(const nlohmann::json& value, const fs::path& file) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string names;
    for (const nlohmann::json& named : value) {
      if (!named.is_object() || !named.contains("name") || !named.contains("template") ||
          !named["name"].is_string() || !named["template"].is_string())
        SLIMTRAIN_THROW(ConfigError, file.string(), ": chat_template ", named.dump(),
                        " is not {\"name\": ..., \"template\": ...}");
      if (named["name"] == "default") return named["template"].get<std::string>();
      names += (names.empty() ? "" : ", ") + named["name"].get<std::string>();
    }
    SLIMTRAIN_THROW(ConfigError, file.string(), ": chat_template names ", names,
                    " but no \"default\" template, the one transformers renders");
  }
  SLIMTRAIN_THROW(ConfigError, file.string(), ": chat_template is ", value.dump(),
                  ", not a template");
}

}  // namespace
}  // namespace chat

ChatTemplate::ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

ChatTemplate ChatTemplate::parse(const std::string& source, const std::string& where) {
  ChatTemplate t;
  t.where_ = where;
  t.program_ = std::make_unique<chat::ChatTemplateProgram>(
      chat::parse_chat_template(chat::lex_chat_template(source, where), where));
  return t;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt,
                                 const std::map<std::string, std::string>& variables) const {
  using chat::Value;
  chat::ValueList list;
  for (const ChatMessage& m : messages) list.push_back(chat::message_value(m));
  // What transformers' render_jinja_template passes: the messages, tools and documents (none
  // here), add_generation_prompt, and the caller's further variables.
  chat::ValueDict globals{{"messages", Value::of(std::move(list))},
                          {"tools", Value::none()},
                          {"documents", Value::none()},
                          {"add_generation_prompt", Value::of(add_generation_prompt)}};
  for (const auto& [name, value] : variables) globals.emplace_back(name, Value::of(value));
  return chat::render_chat_template(*program_, std::move(globals), where_);
}

std::string find_chat_template(const std::string& path, std::string* file) {
  using Path = std::filesystem::path;
  std::error_code error;
  const Path dir =
      std::filesystem::is_directory(path, error) ? Path(path) : Path(path).parent_path();
  const auto found = [&](const Path& from, std::string text) {
    if (file) *file = from.string();
    return text;
  };
  // transformers' processor: processor_config.json's key wins (with a warning), then the legacy
  // chat_template.json, then chat_template.jinja; a tokenizer alone reads tokenizer_config.json.
  const Path processor = dir / "processor_config.json";
  if (const auto j = chat::read_json(processor))
    if (j->is_object() && j->contains("chat_template") && !(*j)["chat_template"].is_null())
      return found(processor, chat::template_of((*j)["chat_template"], processor));
  const Path legacy = dir / "chat_template.json";
  if (const auto j = chat::read_json(legacy)) {
    if (!j->is_object() || !j->contains("chat_template") || !(*j)["chat_template"].is_string())
      SLIMTRAIN_THROW(ConfigError, legacy.string(), ": has no \"chat_template\" string");
    return found(legacy, (*j)["chat_template"].get<std::string>());
  }
  const Path jinja = dir / "chat_template.jinja";
  if (const auto text = chat::read_file(jinja)) return found(jinja, *text);
  const Path config = dir / "tokenizer_config.json";
  if (const auto j = chat::read_json(config))
    if (j->is_object() && j->contains("chat_template") && !(*j)["chat_template"].is_null())
      return found(config, chat::template_of((*j)["chat_template"], config));
  if (file) file->clear();
  return "";
}

}  // namespace slimtrain::tokenize
