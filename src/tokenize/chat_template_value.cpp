#include "slimtrain/tokenize/detail/chat_template_value.hpp"

namespace slimtrain::tokenize::chat {
namespace {

using Kind = Value::Kind;

bool is_number(const Value& v) {
  return v.kind == Kind::kInt || v.kind == Kind::kBool;
}
std::int64_t number(const Value& v) {
  return v.kind == Kind::kBool ? v.boolean : v.integer;
}

[[noreturn]] void refuse(const std::string& what) {
  throw ValueError(what);
}
[[noreturn]] void outside(const std::string& what) {
  refuse(what + " is outside the Jinja subset slimtrain renders");
}

[[noreturn]] void undefined_used(const Value& v) {
  refuse(v.string.empty() ? "a value is undefined" : v.string + " is undefined");
}

// Python's dict methods: jinja2 gives x.items (and x['items'] for a missing key) the method.
bool is_dict_method(const std::string& name) {
  for (const char* m : {"clear", "copy", "fromkeys", "get", "items", "keys", "pop", "popitem",
                        "setdefault", "update", "values"})
    if (name == m) return true;
  return false;
}

const Value* find(const ValueDict& dict, const std::string& key) {
  for (const auto& [k, v] : dict)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace

Value Value::undefined(std::string what) {
  Value v;
  v.string = std::move(what);
  return v;
}
Value Value::none() {
  Value v;
  v.kind = Kind::kNone;
  return v;
}
Value Value::of(bool b) {
  Value v;
  v.kind = Kind::kBool;
  v.boolean = b;
  return v;
}
Value Value::of(std::int64_t i) {
  Value v;
  v.kind = Kind::kInt;
  v.integer = i;
  return v;
}
Value Value::of(std::string s) {
  Value v;
  v.kind = Kind::kString;
  v.string = std::move(s);
  return v;
}
Value Value::of(ValueList items) {
  Value v;
  v.kind = Kind::kList;
  v.list = std::make_shared<const ValueList>(std::move(items));
  return v;
}
Value Value::of(ValueDict items) {
  Value v;
  v.kind = Kind::kDict;
  v.dict = std::make_shared<const ValueDict>(std::move(items));
  return v;
}
Value Value::of_namespace(ValueDict attributes) {
  Value v;
  v.kind = Kind::kNamespace;
  v.space = std::make_shared<Namespace>(Namespace{std::move(attributes)});
  return v;
}
Value Value::of_loop(LoopState state) {
  Value v;
  v.kind = Kind::kLoop;
  v.loop = state;
  return v;
}

const char* type_name(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "namespace";
    case Kind::kLoop:
      return "loop";
  }
  return "value";
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return v.boolean;
    case Kind::kInt:
      return v.integer != 0;
    case Kind::kString:
      return !v.string.empty();
    case Kind::kList:
      return !v.list->empty();
    case Kind::kDict:
      return !v.dict->empty();
    default:
      return true;
  }
}

std::string to_text(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return v.boolean ? "True" : "False";
    case Kind::kInt:
      return std::to_string(v.integer);
    case Kind::kString:
      return v.string;
    default:
      outside(std::string("printing a ") + type_name(v));
  }
}

bool equal(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return number(a) == number(b);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.string == b.string;
    case Kind::kList:
      if (a.list->size() != b.list->size()) return false;
      for (std::size_t i = 0; i < a.list->size(); ++i)
        if (!equal((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Kind::kDict:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [k, v] : *a.dict) {
        const Value* other = find(*b.dict, k);
        if (!other || !equal(v, *other)) return false;
      }
      return true;
    case Kind::kNamespace:
      return a.space == b.space;
    default:
      return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return number(a) < number(b);
  if (a.kind == Kind::kString && b.kind == Kind::kString) return a.string < b.string;
  if (a.kind == Kind::kUndefined) undefined_used(a);
  if (b.kind == Kind::kUndefined) undefined_used(b);
  refuse(std::string("'<' between a ") + type_name(a) + " and a " + type_name(b));
}

bool contains(const Value& haystack, const Value& needle) {
  switch (haystack.kind) {
    case Kind::kUndefined:
      return false;
    case Kind::kString:
      if (needle.kind != Kind::kString)
        refuse(std::string("'in <string>' with a ") + type_name(needle) + " on the left");
      return haystack.string.find(needle.string) != std::string::npos;
    case Kind::kList:
      for (const Value& v : *haystack.list)
        if (equal(v, needle)) return true;
      return false;
    case Kind::kDict:
      return needle.kind == Kind::kString && find(*haystack.dict, needle.string) != nullptr;
    default:
      refuse(std::string("'in' a ") + type_name(haystack));
  }
}

Value add(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return Value::of(number(a) + number(b));
  if (a.kind == Kind::kString && b.kind == Kind::kString) return Value::of(a.string + b.string);
  if (a.kind == Kind::kUndefined) undefined_used(a);
  if (b.kind == Kind::kUndefined) undefined_used(b);
  refuse(std::string("'+' of a ") + type_name(a) + " and a " + type_name(b));
}

Value subtract(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return Value::of(number(a) - number(b));
  if (a.kind == Kind::kUndefined) undefined_used(a);
  if (b.kind == Kind::kUndefined) undefined_used(b);
  refuse(std::string("'-' of a ") + type_name(a) + " and a " + type_name(b));
}

Value negate(const Value& v) {
  if (is_number(v)) return Value::of(-number(v));
  if (v.kind == Kind::kUndefined) undefined_used(v);
  refuse(std::string("'-' of a ") + type_name(v));
}

Value attribute(const Value& v, const std::string& name) {
  switch (v.kind) {
    case Kind::kUndefined:
      undefined_used(v);
    case Kind::kDict: {
      if (const Value* found = find(*v.dict, name)) return *found;
      if (is_dict_method(name)) outside("the dict method '" + name + "'");
      return Value::undefined("the key '" + name + "'");
    }
    case Kind::kNamespace: {
      if (const Value* found = find(v.space->attributes, name)) return *found;
      return Value::undefined("the namespace attribute '" + name + "'");
    }
    case Kind::kLoop: {
      const LoopState& s = v.loop;
      if (name == "index0") return Value::of(s.index0);
      if (name == "index") return Value::of(s.index0 + 1);
      if (name == "first") return Value::of(s.index0 == 0);
      if (name == "last") return Value::of(s.index0 + 1 == s.length);
      if (name == "length") return Value::of(s.length);
      if (name == "revindex") return Value::of(s.length - s.index0);
      if (name == "revindex0") return Value::of(s.length - s.index0 - 1);
      outside("loop." + name);
    }
    default:
      outside(std::string("an attribute of a ") + type_name(v));
  }
}

Value item(const Value& v, const Value& key) {
  if (v.kind == Kind::kList) {
    if (key.kind != Kind::kInt) refuse(std::string("a list indexed by a ") + type_name(key));
    const auto size = static_cast<std::int64_t>(v.list->size());
    const std::int64_t i = key.integer < 0 ? key.integer + size : key.integer;
    if (i < 0 || i >= size) return Value::undefined("list item " + std::to_string(key.integer));
    return (*v.list)[static_cast<std::size_t>(i)];
  }
  if (key.kind == Kind::kString && (v.kind == Kind::kDict || v.kind == Kind::kNamespace ||
                                    v.kind == Kind::kLoop || v.kind == Kind::kUndefined))
    return attribute(v, key.string);
  if (v.kind == Kind::kDict) return Value::undefined("the key " + to_text(key));
  if (v.kind == Kind::kUndefined) undefined_used(v);
  outside(std::string("a ") + type_name(v) + " indexed by a " + type_name(key));
}

ValueList iterate(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
      return {};
    case Kind::kList:
      return *v.list;
    case Kind::kDict: {
      ValueList keys;
      for (const auto& entry : *v.dict) keys.push_back(Value::of(entry.first));
      return keys;
    }
    default:
      outside(std::string("looping over a ") + type_name(v));
  }
}

}  // namespace slimtrain::tokenize::chat
