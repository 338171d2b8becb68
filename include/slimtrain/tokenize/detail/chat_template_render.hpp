#pragma once
/**
 * @brief A parsed chat template run over its variables as jinja2 runs it: a for loop's variable,
 * `loop` and what {% set %} assigns inside it live for one pass of the loop; {% if %} opens no
 * scope; a namespace's attributes change where it was made.
 */
#include <string>

#include "slimtrain/tokenize/detail/chat_template_parser.hpp"
#include "slimtrain/tokenize/detail/chat_template_value.hpp"

namespace slimtrain::tokenize::chat {

/**
 * @brief The template's text for `globals` (messages, add_generation_prompt, ...). ConfigError
 * naming `where` and the line for raise_exception, an operation on a type it does not take, an
 * undefined value used, or a *_token variable the caller did not give.
 */
std::string render_chat_template(const ChatTemplateProgram& program, ValueDict globals,
                                 const std::string& where);

}  // namespace slimtrain::tokenize::chat
