#include "slimtrain/tokenize/detail/chat_template_expression.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/detail/chat_template_filters.hpp"

namespace slimtrain::tokenize::chat {
namespace {

using K = Token::Kind;

bool is_filter(const std::string& name) {
  return name == "length" || name == "count" || name == "trim" || name == "tojson";
}

ExprPtr make(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

ExprPtr make(Expr::Kind kind, int line, std::string name, ExprPtr a, ExprPtr b = nullptr) {
  ExprPtr e = make(kind, line);
  e->name = std::move(name);
  e->operands.push_back(std::move(a));
  if (b) e->operands.push_back(std::move(b));
  return e;
}

ExprPtr literal(int line, Value v) {
  ExprPtr e = make(Expr::Kind::kLiteral, line);
  e->value = std::move(v);
  return e;
}

// One method per precedence level, lowest first, as jinja2's parser.
class ExpressionParser {
 public:
  explicit ExpressionParser(TokenStream& tokens) : t_(tokens) {}

  ExprPtr or_expression() {
    ExprPtr left = and_expression();
    while (t_.at_name("or")) {
      const int line = t_.next().line;
      left = make(Expr::Kind::kOr, line, "or", std::move(left), and_expression());
    }
    return left;
  }

 private:
  ExprPtr and_expression() {
    ExprPtr left = not_expression();
    while (t_.at_name("and")) {
      const int line = t_.next().line;
      left = make(Expr::Kind::kAnd, line, "and", std::move(left), not_expression());
    }
    return left;
  }

  ExprPtr not_expression() {
    if (!t_.at_name("not")) return comparison();
    const int line = t_.next().line;
    return make(Expr::Kind::kNot, line, "not", not_expression());
  }

  // The comparison operator at the cursor ("not in" for two names), consumed; "" when none.
  std::string comparison_operator() {
    for (const char* op : {"==", "!=", "<", ">", "<=", ">="})
      if (t_.at_op(op)) return t_.next().text;
    if (t_.at_name("in")) return t_.next().text;
    if (t_.at_name("not") && t_.at_name("in", 1)) {
      t_.next();
      t_.next();
      return "not in";
    }
    return "";
  }

  ExprPtr comparison() {
    ExprPtr left = sum();
    const int line = t_.peek().line;
    const std::string op = comparison_operator();
    if (op.empty()) return left;
    left = make(Expr::Kind::kBinary, line, op, std::move(left), sum());
    if (!comparison_operator().empty()) t_.outside(line, "a chained comparison (a < b < c)");
    return left;
  }

  ExprPtr sum() {
    ExprPtr left = concatenation();
    while (t_.at_op("+") || t_.at_op("-")) {
      const Token op = t_.next();
      left = make(Expr::Kind::kBinary, op.line, op.text, std::move(left), concatenation());
    }
    return left;
  }

  ExprPtr concatenation() {
    ExprPtr left = product();
    while (t_.at_op("~")) {
      const int line = t_.next().line;
      left = make(Expr::Kind::kBinary, line, "~", std::move(left), product());
    }
    return left;
  }

  ExprPtr product() {
    ExprPtr e = unary(true);
    for (const char* op : {"*", "/", "//", "%", "**"})
      if (t_.at_op(op)) t_.outside(t_.peek().line, std::string("the operator '") + op + "'");
    return e;
  }

  // As jinja2: a unary minus takes a postfixed operand without filters, then the filters and
  // tests apply to the negation.
  ExprPtr unary(bool with_filters) {
    ExprPtr e;
    if (t_.at_op("-")) {
      const int line = t_.next().line;
      e = make(Expr::Kind::kNegate, line, "-", unary(false));
    } else if (t_.at_op("+")) {
      t_.outside(t_.peek().line, "a unary '+'");
    } else {
      e = primary();
    }
    e = postfix(std::move(e));
    return with_filters ? filters_and_tests(std::move(e)) : std::move(e);
  }

  ExprPtr primary() {
    const Token t = t_.next();
    if (t.kind == K::kName) {
      if (t.text == "true" || t.text == "True") return literal(t.line, Value::of(true));
      if (t.text == "false" || t.text == "False") return literal(t.line, Value::of(false));
      if (t.text == "none" || t.text == "None") return literal(t.line, Value::none());
      ExprPtr e = make(Expr::Kind::kName, t.line);
      e->name = t.text;
      return e;
    }
    if (t.kind == K::kString) {
      std::string s = t.text;
      while (t_.peek().kind == K::kString) s += t_.next().text;  // adjacent literals join
      return literal(t.line, Value::of(std::move(s)));
    }
    if (t.kind == K::kInteger) {
      std::int64_t v = 0;
      for (char c : t.text) {
        if (v > (std::numeric_limits<std::int64_t>::max() - (c - '0')) / 10)
          t_.outside(t.line, "an integer this large");
        v = v * 10 + (c - '0');
      }
      return literal(t.line, Value::of(v));
    }
    if (t.kind == K::kOperator && t.text == "(") {
      ExprPtr e = parse_expression(t_);
      if (t_.at_op(",")) t_.outside(t.line, "a tuple");
      t_.expect_op(")");
      return e;
    }
    if (t.kind == K::kOperator && t.text == "[") t_.outside(t.line, "a list literal");
    if (t.kind == K::kOperator && t.text == "{") t_.outside(t.line, "a dict literal");
    t_.fail(t.line, "unexpected " + TokenStream::shown(t) + " in an expression");
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (t_.at_op(".")) {
        const int line = t_.next().line;
        if (t_.peek().kind == K::kInteger) t_.outside(line, "an attribute that is a number (x.0)");
        e = make(Expr::Kind::kAttribute, line, t_.expect_name("after '.'"), std::move(e));
      } else if (t_.at_op("[")) {
        const int line = t_.next().line;
        if (t_.at_op(":")) t_.outside(line, "a slice (x[a:b])");
        ExprPtr key = parse_expression(t_);
        if (t_.at_op(":")) t_.outside(line, "a slice (x[a:b])");
        if (t_.at_op(",")) t_.outside(line, "a tuple subscript");
        t_.expect_op("]");
        e = make(Expr::Kind::kItem, line, "[]", std::move(e), std::move(key));
      } else if (t_.at_op("(")) {
        e = call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr call(ExprPtr callee) {
    const int line = t_.next().line;
    if (callee->kind != Expr::Kind::kName) t_.outside(line, "a method call (x.f(...))");
    if (callee->name != "namespace" && callee->name != "raise_exception")
      t_.outside(line, "the function '" + callee->name + "'");
    ExprPtr e = make(Expr::Kind::kCall, line);
    e->name = callee->name;
    while (!t_.at_op(")")) {
      if (t_.at_op("*") || t_.at_op("**")) t_.outside(line, "*args and **kwargs");
      const Token& after = t_.peek(1);
      if (t_.peek().kind == K::kName && after.kind == K::kOperator && after.text == "=") {
        std::string key = t_.next().text;
        t_.next();
        e->keywords.emplace_back(std::move(key), parse_expression(t_));
      } else {
        e->operands.push_back(parse_expression(t_));
      }
      if (!t_.at_op(",")) break;
      t_.next();
    }
    t_.expect_op(")");
    if (e->name == "namespace" && !e->operands.empty())
      t_.outside(line, "namespace() with positional arguments");
    if (e->name == "raise_exception" && (e->operands.size() != 1 || !e->keywords.empty()))
      t_.fail(line, "raise_exception() takes one message");
    return e;
  }

  ExprPtr filters_and_tests(ExprPtr e) {
    while (true) {
      if (t_.at_op("|")) {
        const int line = t_.next().line;
        const std::string name = t_.expect_name("after '|'");
        if (!is_filter(name)) t_.outside(line, "the filter '" + name + "'");
        if (t_.at_op("(")) t_.outside(line, "arguments to the filter '" + name + "'");
        e = make(Expr::Kind::kFilter, line, name, std::move(e));
      } else if (t_.at_name("is")) {
        const int line = t_.next().line;
        const bool negated = t_.at_name("not");
        if (negated) t_.next();
        const std::string name = t_.expect_name("after 'is'");
        if (!is_test(name)) t_.outside(line, "the test '" + name + "'");
        // jinja2 reads a name, literal or bracket after a test as its argument.
        const Token& t = t_.peek();
        const bool argument =
            (t.kind == K::kName && t.text != "else" && t.text != "or" && t.text != "and") ||
            t.kind == K::kString || t.kind == K::kInteger ||
            (t.kind == K::kOperator && (t.text == "(" || t.text == "[" || t.text == "{"));
        if (argument) t_.outside(line, "an argument to the test '" + name + "'");
        e = make(Expr::Kind::kTest, line, name, std::move(e));
        e->negated = negated;
      } else {
        return e;
      }
    }
  }

  TokenStream& t_;
};

}  // namespace

TokenStream::TokenStream(std::vector<Token> tokens, const std::string& where)
    : tokens_(std::move(tokens)), where_(where) {}

const Token& TokenStream::peek(std::size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

Token TokenStream::next() {
  return tokens_[std::min(pos_++, tokens_.size() - 1)];
}

bool TokenStream::at_name(const char* name, std::size_t ahead) const {
  return peek(ahead).kind == K::kName && peek(ahead).text == name;
}

bool TokenStream::at_op(const char* op) const {
  return peek().kind == K::kOperator && peek().text == op;
}

void TokenStream::expect_op(const char* op) {
  if (!at_op(op)) fail(peek().line, std::string("expected '") + op + "', found " + shown(peek()));
  next();
}

std::string TokenStream::expect_name(const std::string& context) {
  if (peek().kind != K::kName)
    fail(peek().line, "expected a name " + context + ", found " + shown(peek()));
  return next().text;
}

std::string TokenStream::shown(const Token& t) {
  switch (t.kind) {
    case K::kText:
      return "text";
    case K::kPrintBegin:
      return "'{{'";
    case K::kPrintEnd:
      return "'}}'";
    case K::kTagBegin:
      return "'{%'";
    case K::kTagEnd:
      return "'%}'";
    case K::kString:
      return "a string";
    case K::kEnd:
      return "the end of the template";
    default:
      return "'" + t.text + "'";
  }
}

void TokenStream::fail(int line, const std::string& what) const {
  SLIMTRAIN_THROW(ConfigError, where_, ", line ", line, ": ", what);
}

void TokenStream::outside(int line, const std::string& construct) const {
  fail(line, construct + " is outside the Jinja subset slimtrain renders");
}

ExprPtr parse_or_expression(TokenStream& tokens) {
  return ExpressionParser(tokens).or_expression();
}

ExprPtr parse_expression(TokenStream& tokens) {
  ExprPtr e = parse_or_expression(tokens);
  if (tokens.at_name("if")) tokens.outside(tokens.peek().line, "an inline if (x if c else y)");
  return e;
}

}  // namespace slimtrain::tokenize::chat
