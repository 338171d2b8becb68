#pragma once
/**
 * @brief A chat template's tokens made into a tree of statements (text, {{ }}, if, for, set) over
 * the expressions of chat_template_expression.hpp. Tags outside the subset (chat_template.hpp)
 * are refused here, for the whole template.
 */
#include <string>
#include <utility>
#include <vector>

#include "slimtrain/tokenize/detail/chat_template_expression.hpp"
#include "slimtrain/tokenize/detail/chat_template_lexer.hpp"

namespace slimtrain::tokenize::chat {

struct Node;
using Body = std::vector<Node>;

struct Node {
  enum class Kind {
    kText,          ///< text
    kPrint,         ///< {{ expr }}
    kIf,            ///< branches: (condition, body) ..., a null condition for else
    kFor,           ///< {% for name in expr %} body
    kSet,           ///< {% set name = expr %}
    kSetAttribute,  ///< {% set name.attribute = expr %}
  };
  Kind kind;
  int line;
  std::string text;
  std::string name;
  std::string attribute;
  ExprPtr expr;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
};

/** @brief A parsed template. */
struct ChatTemplateProgram {
  Body body;
};

/** @brief ConfigError naming `where`, the line and the construct for anything outside the
 * subset, a tag that is not closed ({% if %} without {% endif %}) or one closed twice. */
ChatTemplateProgram parse_chat_template(std::vector<Token> tokens, const std::string& where);

}  // namespace slimtrain::tokenize::chat
