#pragma once
/**
 * @brief A chat template's source cut into tokens as jinja2's lexer cuts it, with the settings
 * transformers uses: trim_blocks (the newline after a %} or #} goes), lstrip_blocks (the spaces
 * and tabs before a {% or {# on a line of their own go), whitespace control (- and +), newlines
 * made \n and one trailing newline of the source dropped. Comments leave no token.
 */
#include <string>
#include <vector>

namespace slimtrain::tokenize::chat {

struct Token {
  enum class Kind {
    kText,        ///< template text, whitespace control applied
    kPrintBegin,  ///< {{
    kPrintEnd,    ///< }}
    kTagBegin,    ///< {%
    kTagEnd,      ///< %}
    kName,
    kString,  ///< text is the literal's value, escapes decoded
    kInteger,
    kOperator,
    kEnd,  ///< the end of the source
  };
  Kind kind;
  std::string text;
  int line;
};

/** @brief ConfigError naming `where` and the line for an unterminated tag, comment or string, a
 * character no token starts with, an unbalanced bracket, a float or a {% raw %}. */
std::vector<Token> lex_chat_template(const std::string& source, const std::string& where);

}  // namespace slimtrain::tokenize::chat
