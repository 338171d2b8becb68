#pragma once
/**
 * @brief The values a chat template computes with, and Python's meaning of each operation on
 * them (jinja2 evaluates templates as Python): truth, str(), ==, <, in, +, x.key, x[i].
 * An operation Python refuses, or one outside the subset, throws ValueError; the renderer adds
 * the template's name and line.
 */
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace slimtrain::tokenize::chat {

struct Value;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;  ///< keys in insertion order

/** @brief jinja2's Namespace: the one value a template can change (set ns.attr = ...). */
struct Namespace {
  ValueDict attributes;
};

/** @brief A for loop's `loop`. */
struct LoopState {
  std::int64_t index0 = 0;
  std::int64_t length = 0;
};

struct Value {
  enum class Kind { kUndefined, kNone, kBool, kInt, kString, kList, kDict, kNamespace, kLoop };
  Kind kind = Kind::kUndefined;
  bool boolean = false;
  std::int64_t integer = 0;
  std::string string;  ///< kString's text; for kUndefined, what was undefined (for errors)
  std::shared_ptr<const ValueList> list;
  std::shared_ptr<const ValueDict> dict;
  std::shared_ptr<Namespace> space;
  LoopState loop;

  static Value undefined(std::string what);
  static Value none();
  static Value of(bool b);
  static Value of(std::int64_t i);
  static Value of(std::string s);
  static Value of(const char* s) { return of(std::string(s)); }
  static Value of(ValueList items);
  static Value of(ValueDict items);
  static Value of_namespace(ValueDict attributes);
  static Value of_loop(LoopState state);
};

/** @brief An operation refused: what Python's TypeError or jinja2's UndefinedError would say. */
class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** @brief "str", "int", "list", "dict", "undefined" ...: the type's name in messages. */
const char* type_name(const Value& v);
bool truthy(const Value& v);
/** @brief str(v) as {{ v }} prints it: "" for undefined, "None", "True", digits, the string. */
std::string to_text(const Value& v);
bool equal(const Value& a, const Value& b);
/** @brief a < b for numbers and for strings (code point order); ValueError otherwise. */
bool less(const Value& a, const Value& b);
/** @brief `needle in haystack`. */
bool contains(const Value& haystack, const Value& needle);
Value add(const Value& a, const Value& b);
Value subtract(const Value& a, const Value& b);
Value negate(const Value& v);
/** @brief x.name and x['name']: a mapping's item, a namespace's attribute, loop's fields. */
Value attribute(const Value& v, const std::string& name);
/** @brief x[key]: a mapping's item, or a list's element (negative from the end). */
Value item(const Value& v, const Value& key);
/** @brief What `for x in v` visits: a list's elements, a mapping's keys, nothing when undefined. */
ValueList iterate(const Value& v);

}  // namespace slimtrain::tokenize::chat
