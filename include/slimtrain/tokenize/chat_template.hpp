#pragma once
/**
 * @brief A checkpoint's chat template, rendered natively for `prep text`: the subset of Jinja that
 * Qwen2, Qwen2.5, Qwen2-VL and Qwen2.5-VL templates are written in, rendered byte for byte as
 * transformers' apply_chat_template renders them with jinja2 (trim_blocks, lstrip_blocks, one
 * trailing newline of the template dropped, raise_exception and namespace as globals, tools and
 * documents none).
 *
 * The subset: text; {{ expr }}; {% if %}/{% elif %}/{% else %}/{% endif %}; {% for x in xs %}
 * with loop.index, index0, first, last, length, revindex, revindex0; {% set x = ... %} and
 * {% set ns.attr = ... %} on a namespace(...); {# comments #}; whitespace control ({%- -%} {{- -}}
 * {#- -#}, {%+ +%}); string literals with Python's escapes, integers, true/false/none; + and -
 * on integers, + and ~ on strings; ==, !=, <, >, <=, >=, in, not in; and, or, not; subscripts
 * x['key'] and x[0] (negative too), attributes x.key; the tests defined, undefined, none,
 * string, number, integer, boolean, mapping, iterable; the filters length (count), trim, tojson;
 * the calls namespace(name=value, ...) and raise_exception(message). Anything else (macros,
 * inline if, slices, method calls, other filters, tests and tags) is a ConfigError naming the
 * template, the line and the construct, raised by parse() for the whole template, used branch
 * or not; a failure while rendering (raise_exception, a type the operation does not take) is a
 * ConfigError naming the line too.
 */
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace slimtrain::tokenize {

namespace chat {
struct ChatTemplateProgram;
}

/** @brief One part of a message's content: {"type": "text", "text": ...} or {"type": "image"}. */
struct ChatPart {
  std::string type;  ///< "text" or "image" (any other type is passed as {"type": type})
  std::string text;  ///< a "text" part's text
};

/** @brief One message, as transformers' processors take them. */
struct ChatMessage {
  std::string role;                           ///< "system", "user", "assistant"
  std::vector<ChatPart> content;              ///< the parts, when content_string is not set
  std::optional<std::string> content_string;  ///< set: the content is this plain string
};

class ChatTemplate {
 public:
  /**
   * @brief Parses a template's text; `where` names it in errors (the file it came from).
   * ConfigError for a construct outside the subset, an unterminated tag or block, a syntax error.
   */
  static ChatTemplate parse(const std::string& source, const std::string& where);
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

  /**
   * @brief The text of `messages`, with the assistant turn's opening when
   * `add_generation_prompt`. `variables` are further strings the template may read, as
   * transformers passes the tokenizer's special tokens (bos_token, eos_token, ...); a template
   * that reads an undefined *_token variable is a ConfigError, not an empty string.
   */
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                     const std::map<std::string, std::string>& variables = {}) const;

 private:
  ChatTemplate();
  std::unique_ptr<chat::ChatTemplateProgram> program_;
  std::string where_;
};

/**
 * @brief The chat template of the checkpoint at `path` (its directory, or a file in it such as
 * its tokenizer.json), found where transformers' processor looks: processor_config.json's
 * "chat_template", chat_template.json's "chat_template", chat_template.jinja, then
 * tokenizer_config.json's "chat_template" (a string, or a list of {name, template} of which
 * "default" is taken). "" when there is none; `file`, when given, is set to the file it came from.
 * ConfigError for a file that is not JSON or a template value of the wrong type.
 */
std::string find_chat_template(const std::string& path, std::string* file = nullptr);

}  // namespace slimtrain::tokenize
