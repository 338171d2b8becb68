#pragma once
/**
 * @brief The filters and tests of the subset, and Python's view of UTF-8 text they and the lexer
 * need: code points (|length counts them) and whitespace (str.isspace(): what |trim, {%- and -%}
 * strip). A filter Python refuses throws ValueError.
 */
#include <cstddef>
#include <cstdint>
#include <string>

#include "slimtrain/tokenize/detail/chat_template_value.hpp"

namespace slimtrain::tokenize::chat {

/** @brief |length (and |count): code points of a string, elements, keys; 0 when undefined. */
std::int64_t length(const Value& v);
/** @brief |trim: str(v) without its leading and trailing whitespace (Python's str.strip()). */
std::string trim(const Value& v);
/** @brief |tojson as transformers overrides it: json.dumps(v, ensure_ascii=False). */
std::string to_json(const Value& v);

/** @brief Whether `name` is a test of the subset: defined, undefined, none, string, number,
 * integer, boolean, mapping, iterable. */
bool is_test(const std::string& name);
/** @brief `v is <name>` for a test of the subset. */
bool test(const std::string& name, const Value& v);

/** @brief Byte length of the whitespace code point (Python's str.isspace()) at `pos`, else 0. */
std::size_t space_at(const std::string& s, std::size_t pos);
/** @brief Byte length of the whitespace code point ending just before `end`, else 0. */
std::size_t space_before(const std::string& s, std::size_t end);

}  // namespace slimtrain::tokenize::chat
