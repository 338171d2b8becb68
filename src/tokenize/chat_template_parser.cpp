#include "slimtrain/tokenize/detail/chat_template_parser.hpp"

#include <algorithm>

namespace slimtrain::tokenize::chat {
namespace {

using K = Token::Kind;

// Tags jinja2 has and the subset does not: refused by name, so the message says what they are.
const char* const kJinjaTags[] = {
    "macro",   "call",       "filter",        "include",      "import",    "from",
    "extends", "block",      "with",          "autoescape",   "break",     "continue",
    "do",      "generation", "endmacro",      "endcall",      "endfilter", "endblock",
    "endwith", "endset",     "endgeneration", "endautoescape"};

Node node(Node::Kind kind, int line) {
  Node n;
  n.kind = kind;
  n.line = line;
  return n;
}

class StatementParser {
 public:
  StatementParser(std::vector<Token> tokens, const std::string& where)
      : t_(std::move(tokens), where) {}

  ChatTemplateProgram run() {
    ChatTemplateProgram program;
    std::string stopped;
    program.body = body({}, stopped, 0, "");
    return program;
  }

 private:
  void expect_tag_end(const std::string& tag) {
    if (t_.peek().kind != K::kTagEnd)
      t_.fail(t_.peek().line,
              "expected '%}' to end {% " + tag + " %}, found " + TokenStream::shown(t_.peek()));
    t_.next();
  }

  // Statements up to a {% tag %} named in `stops` (consumed up to its name, returned in
  // `stopped`); the end of the template ends only the top level.
  Body body(const std::vector<std::string>& stops, std::string& stopped, int open_line,
            const std::string& open_tag) {
    Body out;
    while (true) {
      const Token t = t_.next();
      if (t.kind == K::kEnd) {
        if (!stops.empty())
          t_.fail(open_line,
                  "{% " + open_tag + " %} is never closed (no {% " + stops.back() + " %})");
        return out;
      }
      if (t.kind == K::kText) {
        Node n = node(Node::Kind::kText, t.line);
        n.text = t.text;
        out.push_back(std::move(n));
      } else if (t.kind == K::kPrintBegin) {
        Node n = node(Node::Kind::kPrint, t.line);
        n.expr = parse_expression(t_);
        if (t_.peek().kind != K::kPrintEnd)
          t_.fail(t_.peek().line, "expected '}}', found " + TokenStream::shown(t_.peek()));
        t_.next();
        out.push_back(std::move(n));
      } else if (t.kind == K::kTagBegin) {
        const std::string tag = t_.expect_name("after '{%'");
        if (std::find(stops.begin(), stops.end(), tag) != stops.end()) {
          stopped = tag;
          return out;
        }
        out.push_back(statement(tag, t.line));
      } else {
        t_.fail(t.line, "unexpected " + TokenStream::shown(t));
      }
    }
  }

  Node statement(const std::string& tag, int line) {
    if (tag == "if") return if_statement(line);
    if (tag == "for") return for_statement(line);
    if (tag == "set") return set_statement(line);
    if (tag == "elif" || tag == "else" || tag == "endif" || tag == "endfor")
      t_.fail(line, "{% " + tag + " %} without the tag it closes");
    for (const char* known : kJinjaTags)
      if (tag == known) t_.outside(line, "the tag {% " + tag + " %}");
    t_.fail(line, "unknown tag {% " + tag + " %}");
  }

  Node if_statement(int line) {
    Node n = node(Node::Kind::kIf, line);
    ExprPtr condition = parse_expression(t_);
    expect_tag_end("if");
    while (true) {
      std::string stopped;
      Body branch = body({"elif", "else", "endif"}, stopped, line, "if");
      n.branches.emplace_back(std::move(condition), std::move(branch));
      if (stopped == "elif") {
        condition = parse_expression(t_);
        expect_tag_end("elif");
        continue;
      }
      if (stopped == "else") {
        expect_tag_end("else");
        Body last = body({"endif"}, stopped, line, "if");
        n.branches.emplace_back(nullptr, std::move(last));
      }
      expect_tag_end("endif");
      return n;
    }
  }

  Node for_statement(int line) {
    Node n = node(Node::Kind::kFor, line);
    n.name = t_.expect_name("after {% for");
    if (t_.at_op(",")) t_.outside(line, "unpacking several loop variables");
    if (!t_.at_name("in"))
      t_.fail(t_.peek().line, "expected 'in' in {% for %}, found " + TokenStream::shown(t_.peek()));
    t_.next();
    n.expr = parse_or_expression(t_);
    if (t_.at_name("if")) t_.outside(line, "a filtered loop ({% for x in xs if ... %})");
    if (t_.at_name("recursive")) t_.outside(line, "a recursive loop");
    expect_tag_end("for");
    std::string stopped;
    n.body = body({"else", "endfor"}, stopped, line, "for");
    if (stopped == "else") t_.outside(line, "{% for %} ... {% else %}");
    expect_tag_end("endfor");
    return n;
  }

  Node set_statement(int line) {
    Node n = node(Node::Kind::kSet, line);
    n.name = t_.expect_name("after {% set");
    if (t_.at_op(".")) {
      t_.next();
      n.kind = Node::Kind::kSetAttribute;
      n.attribute = t_.expect_name("after '.'");
    }
    if (t_.at_op(",")) t_.outside(line, "assigning several names at once");
    if (t_.peek().kind == K::kTagEnd) t_.outside(line, "a {% set %} block");
    t_.expect_op("=");
    n.expr = parse_expression(t_);
    expect_tag_end("set");
    return n;
  }

  TokenStream t_;
};

}  // namespace

ChatTemplateProgram parse_chat_template(std::vector<Token> tokens, const std::string& where) {
  return StatementParser(std::move(tokens), where).run();
}

}  // namespace slimtrain::tokenize::chat
