#include "slimtrain/tokenize/detail/chat_template_render.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/detail/chat_template_filters.hpp"

namespace slimtrain::tokenize::chat {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void assign(ValueDict& dict, const std::string& name, Value value) {
  for (auto& [k, v] : dict)
    if (k == name) {
      v = std::move(value);
      return;
    }
  dict.emplace_back(name, std::move(value));
}

class Renderer {
 public:
  Renderer(ValueDict globals, const std::string& where) : where_(where) {
    scopes_.push_back(std::move(globals));
  }

  std::string run(const Body& body) {
    try {
      exec(body);
    } catch (const ValueError& e) {
      SLIMTRAIN_THROW(ConfigError, where_, ", line ", line_, ": ", e.what());
    }
    return std::move(out_);
  }

 private:
  void exec(const Body& body) {
    for (const Node& n : body) exec(n);
  }

  void exec(const Node& n) {
    line_ = n.line;
    switch (n.kind) {
      case Node::Kind::kText:
        out_ += n.text;
        return;
      case Node::Kind::kPrint:
        out_ += to_text(eval(*n.expr));
        return;
      case Node::Kind::kIf:
        for (const auto& [condition, body] : n.branches)
          if (!condition || truthy(eval(*condition))) {
            exec(body);
            return;
          }
        return;
      case Node::Kind::kFor: {
        const ValueList items = iterate(eval(*n.expr));
        const auto length = static_cast<std::int64_t>(items.size());
        for (std::int64_t i = 0; i < length; ++i) {
          scopes_.push_back({{n.name, items[static_cast<std::size_t>(i)]},
                             {"loop", Value::of_loop({i, length})}});
          exec(n.body);
          scopes_.pop_back();
        }
        return;
      }
      case Node::Kind::kSet:
        assign(scopes_.back(), n.name, eval(*n.expr));
        return;
      case Node::Kind::kSetAttribute: {
        const Value target = lookup(n.name, false);
        if (target.kind != Value::Kind::kNamespace)
          throw ValueError("{% set " + n.name + "." + n.attribute + " %} on a " +
                           type_name(target) + ", not a namespace");
        Value value = eval(*n.expr);
        assign(target.space->attributes, n.attribute, std::move(value));
        return;
      }
    }
  }

  // A name's value, innermost scope first. An undefined *_token is an error unless `quiet` (the
  // operand of `is defined`): transformers passes the tokenizer's special tokens, and a template
  // that prints one must not get "" silently.
  Value lookup(const std::string& name, bool quiet) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
      for (const auto& [k, v] : *scope)
        if (k == name) return v;
    if (!quiet && ends_with(name, "_token"))
      throw ValueError("the template reads '" + name +
                       "', a special token slimtrain was not given");
    return Value::undefined("'" + name + "'");
  }

  Value eval(const Expr& e) {
    line_ = e.line;
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        return e.value;
      case Expr::Kind::kName:
        return lookup(e.name, false);
      case Expr::Kind::kAttribute:
        return attribute(eval(*e.operands[0]), e.name);
      case Expr::Kind::kItem: {
        const Value container = eval(*e.operands[0]);
        return item(container, eval(*e.operands[1]));
      }
      case Expr::Kind::kCall:
        return call(e);
      case Expr::Kind::kFilter: {
        const Value v = eval(*e.operands[0]);
        if (e.name == "length" || e.name == "count") return Value::of(length(v));
        if (e.name == "trim") return Value::of(trim(v));
        return Value::of(to_json(v));
      }
      case Expr::Kind::kTest: {
        const Expr& operand = *e.operands[0];
        const bool quiet =
            (e.name == "defined" || e.name == "undefined") && operand.kind == Expr::Kind::kName;
        const Value v = quiet ? lookup(operand.name, true) : eval(operand);
        return Value::of(test(e.name, v) != e.negated);
      }
      case Expr::Kind::kNegate:
        return negate(eval(*e.operands[0]));
      case Expr::Kind::kBinary:
        return binary(e);
      case Expr::Kind::kAnd: {
        Value left = eval(*e.operands[0]);
        return truthy(left) ? eval(*e.operands[1]) : left;
      }
      case Expr::Kind::kOr: {
        Value left = eval(*e.operands[0]);
        return truthy(left) ? left : eval(*e.operands[1]);
      }
      case Expr::Kind::kNot:
        return Value::of(!truthy(eval(*e.operands[0])));
    }
    throw ValueError("an expression slimtrain cannot evaluate");
  }

  Value binary(const Expr& e) {
    const Value a = eval(*e.operands[0]);
    const Value b = eval(*e.operands[1]);
    line_ = e.line;
    const std::string& op = e.name;
    if (op == "+") return add(a, b);
    if (op == "-") return subtract(a, b);
    if (op == "~") return Value::of(to_text(a) + to_text(b));
    if (op == "==") return Value::of(equal(a, b));
    if (op == "!=") return Value::of(!equal(a, b));
    if (op == "<") return Value::of(less(a, b));
    if (op == ">") return Value::of(less(b, a));
    if (op == "<=") return Value::of(!less(b, a));
    if (op == ">=") return Value::of(!less(a, b));
    if (op == "in") return Value::of(contains(b, a));
    return Value::of(!contains(b, a));  // "not in"
  }

  Value call(const Expr& e) {
    if (e.name == "namespace") {
      ValueDict attributes;
      for (const auto& [key, value] : e.keywords) assign(attributes, key, eval(*value));
      return Value::of_namespace(std::move(attributes));
    }
    const std::string message = to_text(eval(*e.operands[0]));  // raise_exception
    SLIMTRAIN_THROW(ConfigError, where_, ", line ", e.line,
                    ": the chat template raised an exception: ", message);
  }

  const std::string& where_;
  std::vector<ValueDict> scopes_;
  std::string out_;
  int line_ = 1;
};

}  // namespace

std::string render_chat_template(const ChatTemplateProgram& program, ValueDict globals,
                                 const std::string& where) {
  return Renderer(std::move(globals), where).run(program.body);
}

}  // namespace slimtrain::tokenize::chat
