#pragma once
/**
 * @brief A chat template's expressions, parsed with jinja2's precedence (or < and < not <
 * comparisons < + - < ~ < unary - < filters, tests, calls, subscripts and attributes), and the
 * token stream the statement parser (chat_template_parser.hpp) shares. Everything outside the
 * subset (chat_template.hpp) is refused here, for the whole template, so a branch the messages
 * never reach cannot fail later.
 */
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "slimtrain/tokenize/detail/chat_template_lexer.hpp"
#include "slimtrain/tokenize/detail/chat_template_value.hpp"

namespace slimtrain::tokenize::chat {

struct Expr {
  enum class Kind {
    kLiteral,    ///< value
    kName,       ///< name
    kAttribute,  ///< operands[0].name
    kItem,       ///< operands[0][operands[1]]
    kCall,       ///< name(operands..., keywords...): namespace, raise_exception
    kFilter,     ///< operands[0] | name
    kTest,       ///< operands[0] is [not] name
    kNegate,     ///< -operands[0]
    kBinary,     ///< operands[0] name operands[1]: + - ~ == != < > <= >= in "not in"
    kAnd,
    kOr,
    kNot,
  };
  Kind kind;
  int line;
  Value value;
  std::string name;
  std::vector<std::unique_ptr<Expr>> operands;
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> keywords;
  bool negated = false;  ///< kTest: "is not"
};
using ExprPtr = std::unique_ptr<Expr>;

/** @brief The tokens being parsed, and errors that name the template and the line. */
class TokenStream {
 public:
  TokenStream(std::vector<Token> tokens, const std::string& where);
  const Token& peek(std::size_t ahead = 0) const;
  Token next();
  bool at_name(const char* name, std::size_t ahead = 0) const;
  bool at_op(const char* op) const;
  void expect_op(const char* op);
  std::string expect_name(const std::string& context);
  /** @brief "'%}'", "a string", "the end of the template": a token as a message shows it. */
  static std::string shown(const Token& t);
  [[noreturn]] void fail(int line, const std::string& what) const;
  /** @brief ConfigError: "<construct> is outside the Jinja subset slimtrain renders". */
  [[noreturn]] void outside(int line, const std::string& construct) const;

 private:
  std::vector<Token> tokens_;
  std::string where_;
  std::size_t pos_ = 0;
};

/** @brief The expression at the cursor; an inline if after it is refused. */
ExprPtr parse_expression(TokenStream& tokens);
/** @brief The expression at the cursor, stopping before an `if` (a for loop's iterable). */
ExprPtr parse_or_expression(TokenStream& tokens);

}  // namespace slimtrain::tokenize::chat
