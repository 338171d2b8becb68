#include "slimtrain/tokenize/detail/chat_template_lexer.hpp"

#include <cctype>
#include <cstdint>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/detail/chat_template_filters.hpp"

namespace slimtrain::tokenize::chat {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

// \r\n and \r become \n, and one trailing newline goes (jinja2's keep_trailing_newline=False).
std::string normalise_newlines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  Lexer(const std::string& source, const std::string& where)
      : src_(normalise_newlines(source)), where_(where) {}

  std::vector<Token> run() {
    bool line_starting = true;  // the previous match ended a line (lstrip_blocks' rule)
    while (pos_ < src_.size()) {
      const std::size_t open = next_opening(pos_);
      std::string text = src_.substr(pos_, open - pos_);
      const int text_line = line_;
      line_ += count_newlines(text);
      if (open == src_.size()) {
        emit(Token::Kind::kText, text, text_line);
        break;
      }
      const char kind = src_[open + 1];  // '{', '%' or '#'
      std::size_t at = open + 2;
      const char sign = at < src_.size() && (src_[at] == '-' || src_[at] == '+') ? src_[at] : 0;
      if (sign) ++at;
      if (sign == '-') {
        text = rstrip(text);
      } else if (sign != '+' && kind != '{') {
        const std::size_t line_start =
            text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) && line_start < text.size() &&
            all_space(text, line_start))
          text.erase(line_start);
      }
      emit(Token::Kind::kText, text, text_line);
      pos_ = at;
      if (kind == '#')
        line_starting = comment(open);
      else
        line_starting = tag(kind == '%');
    }
    tokens_.push_back({Token::Kind::kEnd, "", line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const {
    SLIMTRAIN_THROW(ConfigError, where_, ", line ", line, ": ", what);
  }

  std::size_t next_opening(std::size_t from) const {
    for (std::size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    return src_.size();
  }

  static int count_newlines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }

  static std::string rstrip(const std::string& s) {
    std::size_t end = s.size();
    while (std::size_t n = space_before(s, end)) end -= n;
    return s.substr(0, end);
  }

  static bool all_space(const std::string& s, std::size_t from) {
    while (from < s.size()) {
      const std::size_t n = space_at(s, from);
      if (!n) return false;
      from += n;
    }
    return true;
  }

  void emit(Token::Kind kind, std::string text, int line) {
    if (kind == Token::Kind::kText && text.empty()) return;
    tokens_.push_back({kind, std::move(text), line});
  }

  // Skips whitespace after a "-" end marker; returns whether the skipped text ended a line.
  bool skip_space() {
    bool newline_last = false;
    while (std::size_t n = space_at(src_, pos_)) {
      newline_last = src_[pos_] == '\n';
      line_ += newline_last;
      pos_ += n;
    }
    return newline_last;
  }

  bool comment(std::size_t open) {
    const int line = line_;
    const std::size_t close = src_.find("#}", pos_);
    if (close == std::string::npos) fail(line, "a {# comment #} that never ends");
    const char sign =
        close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
    line_ += count_newlines(src_.substr(open, close - open));
    pos_ = close + 2;
    return after_end(sign);
  }

  // What follows a %} or #}: the whitespace a "-" strips, or the one newline trim_blocks drops.
  bool after_end(char sign) {
    if (sign == '-') return skip_space();
    if (sign == '+') return false;
    if (pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      ++line_;
      return true;
    }
    return false;
  }

  bool tag(bool statement) {
    const int open_line = line_;
    emit(statement ? Token::Kind::kTagBegin : Token::Kind::kPrintBegin, "", line_);
    std::string closers;  // brackets still open, innermost last
    while (true) {
      while (std::size_t n = space_at(src_, pos_)) {
        line_ += src_[pos_] == '\n';
        pos_ += n;
      }
      if (pos_ >= src_.size())
        fail(open_line, std::string("a ") + (statement ? "{% tag" : "{{ expression") +
                            " that never ends (no " + (statement ? "%}" : "}}") + ")");
      if (closers.empty()) {
        const char* end = statement ? "%}" : "}}";
        if (src_.compare(pos_, 2, end) == 0 ||
            ((src_[pos_] == '-' || (statement && src_[pos_] == '+')) &&
             src_.compare(pos_ + 1, 2, end) == 0)) {
          const char sign = src_[pos_] == end[0] ? 0 : src_[pos_];
          pos_ += sign ? 3 : 2;
          emit(statement ? Token::Kind::kTagEnd : Token::Kind::kPrintEnd, "", line_);
          if (statement) return after_end(sign);
          return sign == '-' ? skip_space() : false;
        }
      }
      expression_token(closers);
    }
  }

  void expression_token(std::string& closers) {
    const char c = src_[pos_];
    if (c == '\'' || c == '"') return string_literal();
    if (is_digit(c)) {
      std::size_t end = pos_;
      while (end < src_.size() && (is_digit(src_[end]) || src_[end] == '_')) ++end;
      if (end + 1 < src_.size() && (src_[end] == '.' || src_[end] == 'e') &&
          is_digit(src_[end + 1]))
        fail(line_, "a float literal is outside the Jinja subset slimtrain renders");
      std::string digits;
      for (std::size_t i = pos_; i < end; ++i)
        if (src_[i] != '_') digits += src_[i];
      emit(Token::Kind::kInteger, digits, line_);
      pos_ = end;
      return;
    }
    if (is_name_start(c)) {
      std::size_t end = pos_;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      const std::string name = src_.substr(pos_, end - pos_);
      if (name == "raw" && tokens_.back().kind == Token::Kind::kTagBegin)
        fail(line_, "{% raw %} is outside the Jinja subset slimtrain renders");
      emit(Token::Kind::kName, name, line_);
      pos_ = end;
      return;
    }
    static const char* const kOperators[] = {"**", "//", "==", "!=", ">=", "<=", "+", "-", "*",
                                             "/",  "%",  "~",  "[",  "]",  "(",  ")", "{", "}",
                                             ">",  "<",  "=",  ".",  ":",  "|",  ",", ";"};
    for (const char* op : kOperators) {
      const std::string o(op);
      if (src_.compare(pos_, o.size(), o) != 0) continue;
      if (o == "(" || o == "[" || o == "{") {
        closers += o == "(" ? ')' : o == "[" ? ']' : '}';
      } else if (o == ")" || o == "]" || o == "}") {
        if (closers.empty() || closers.back() != o[0]) fail(line_, "an unbalanced '" + o + "'");
        closers.pop_back();
      }
      emit(Token::Kind::kOperator, o, line_);
      pos_ += o.size();
      return;
    }
    fail(line_, std::string("unexpected character '") + c + "' in an expression");
  }

  // A '...' or "..." literal, decoded as jinja2 decodes it (Python's unicode-escape).
  void string_literal() {
    const char quote = src_[pos_];
    const int line = line_;
    std::string value;
    std::size_t i = pos_ + 1;
    while (true) {
      if (i >= src_.size()) fail(line, "a string literal that never ends");
      const char c = src_[i];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) fail(line, "a string literal that never ends");
      i = escape(i + 1, value, line);
    }
    pos_ = i + 1;
    emit(Token::Kind::kString, value, line);
  }

  // Decodes the escape whose character is at `i`; returns the index after it.
  std::size_t escape(std::size_t i, std::string& value, int line) {
    const char e = src_[i];
    const char* simple = "\\\\''\"\"a\ab\bf\fn\nr\rt\tv\v";
    for (const char* s = simple; *s; s += 2)
      if (e == s[0]) {
        value += s[1];
        return i + 1;
      }
    if (e == '\n') {  // a line continuation
      ++line_;
      return i + 1;
    }
    if (e >= '0' && e <= '7') {
      std::uint32_t cp = 0;
      std::size_t n = 0;
      while (n < 3 && i + n < src_.size() && src_[i + n] >= '0' && src_[i + n] <= '7')
        cp = cp * 8 + static_cast<std::uint32_t>(src_[i + n++] - '0');
      append_utf8(value, cp);
      return i + n;
    }
    if (e == 'x' || e == 'u' || e == 'U') {
      const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      std::uint32_t cp = 0;
      for (std::size_t k = 1; k <= digits; ++k) {
        const char h = i + k < src_.size() ? src_[i + k] : 0;
        if (!std::isxdigit(static_cast<unsigned char>(h)))
          fail(line, std::string("a truncated \\") + e + " escape in a string literal");
        cp = cp * 16 +
             static_cast<std::uint32_t>(
                 is_digit(h) ? h - '0' : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
      }
      if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        fail(line, "an escape in a string literal that is not a Unicode character");
      append_utf8(value, cp);
      return i + 1 + digits;
    }
    if (e == 'N' || static_cast<unsigned char>(e) >= 0x80)
      fail(line, std::string("the escape \\") + e +
                     " in a string literal is outside the Jinja subset slimtrain renders");
    value += '\\';  // Python keeps an unknown escape as it stands
    value += e;
    return i + 1;
  }

  std::string src_;
  const std::string& where_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex_chat_template(const std::string& source, const std::string& where) {
  return Lexer(source, where).run();
}

}  // namespace slimtrain::tokenize::chat
