#include "slimtrain/tokenize/detail/chat_template_filters.hpp"

#include <cstdio>

namespace slimtrain::tokenize::chat {
namespace {

using Kind = Value::Kind;

[[noreturn]] void refuse_filter(const std::string& what) {
  throw ValueError(what);
}

// The code point whose UTF-8 encoding starts at `pos` (and its length); U+FFFD when malformed.
std::uint32_t decode(const std::string& s, std::size_t pos, std::size_t& length) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(pos);
  std::size_t n = c < 0x80           ? 1
                  : (c >> 5) == 0x6  ? 2
                  : (c >> 4) == 0xE  ? 3
                  : (c >> 3) == 0x1E ? 4
                                     : 0;
  if (n == 0 || pos + n > s.size()) {
    length = 1;
    return 0xFFFD;
  }
  std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (byte(pos + k) & 0x3F);
  length = n;
  return cp;
}

bool python_space(std::uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

void json_string(const std::string& s, std::string& out) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char code[8];
          std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
          out += code;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void json(const Value& v, std::string& out) {
  switch (v.kind) {
    case Kind::kNone:
      out += "null";
      return;
    case Kind::kBool:
      out += v.boolean ? "true" : "false";
      return;
    case Kind::kInt:
      out += std::to_string(v.integer);
      return;
    case Kind::kString:
      json_string(v.string, out);
      return;
    case Kind::kList:
      out += '[';
      for (std::size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += ", ";
        json((*v.list)[i], out);
      }
      out += ']';
      return;
    case Kind::kDict:
      out += '{';
      for (std::size_t i = 0; i < v.dict->size(); ++i) {
        if (i) out += ", ";
        json_string((*v.dict)[i].first, out);
        out += ": ";
        json((*v.dict)[i].second, out);
      }
      out += '}';
      return;
    default:
      refuse_filter(std::string("tojson of a ") + type_name(v) + " (not JSON serializable)");
  }
}

}  // namespace

std::int64_t length(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
      return 0;
    case Kind::kString: {
      std::int64_t n = 0;
      for (std::size_t i = 0, step = 0; i < v.string.size(); i += step, ++n)
        decode(v.string, i, step);
      return n;
    }
    case Kind::kList:
      return static_cast<std::int64_t>(v.list->size());
    case Kind::kDict:
      return static_cast<std::int64_t>(v.dict->size());
    default:
      refuse_filter(std::string("length of a ") + type_name(v));
  }
}

std::string trim(const Value& v) {
  const std::string s = to_text(v);
  std::size_t begin = 0, end = s.size();
  while (std::size_t n = space_at(s, begin)) begin += n;
  while (end > begin)
    if (std::size_t n = space_before(s, end))
      end -= n;
    else
      break;
  return s.substr(begin, end - begin);
}

std::string to_json(const Value& v) {
  std::string out;
  json(v, out);
  return out;
}

bool is_test(const std::string& name) {
  for (const char* t : {"defined", "undefined", "none", "string", "number", "integer", "boolean",
                        "mapping", "iterable"})
    if (name == t) return true;
  return false;
}

bool test(const std::string& name, const Value& v) {
  if (name == "defined") return v.kind != Kind::kUndefined;
  if (name == "undefined") return v.kind == Kind::kUndefined;
  if (name == "none") return v.kind == Kind::kNone;
  if (name == "string") return v.kind == Kind::kString;
  if (name == "number") return v.kind == Kind::kInt || v.kind == Kind::kBool;
  if (name == "integer") return v.kind == Kind::kInt;
  if (name == "boolean") return v.kind == Kind::kBool;
  if (name == "mapping") return v.kind == Kind::kDict;
  if (name == "iterable")
    return v.kind == Kind::kUndefined || v.kind == Kind::kString || v.kind == Kind::kList ||
           v.kind == Kind::kDict;
  return false;
}

std::size_t space_at(const std::string& s, std::size_t pos) {
  if (pos >= s.size()) return 0;
  std::size_t n = 0;
  const std::uint32_t cp = decode(s, pos, n);
  return python_space(cp) ? n : 0;
}

std::size_t space_before(const std::string& s, std::size_t end) {
  std::size_t start = end;
  while (start > 0 && end - start < 4) {
    --start;
    if ((static_cast<unsigned char>(s[start]) & 0xC0) != 0x80) break;
  }
  if (start == end) return 0;
  std::size_t n = 0;
  const std::uint32_t cp = decode(s, start, n);
  return start + n == end && python_space(cp) ? n : 0;
}

}  // namespace slimtrain::tokenize::chat
