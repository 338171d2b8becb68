#include "slimtrain/data/text_encoding.hpp"

#include <iconv.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {
namespace {

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts(const InputBytes& b, std::initializer_list<std::uint8_t> mark) {
  return b.size() >= mark.size() && std::equal(mark.begin(), mark.end(), b.data());
}

// The encoding a byte order mark names, and its length; UTF-32's before UTF-16's, whose marks
// begin the same.
std::pair<std::string, std::size_t> byte_order_mark(const InputBytes& b) {
  if (starts(b, {0xFF, 0xFE, 0x00, 0x00})) return {"UTF-32LE", 4};
  if (starts(b, {0x00, 0x00, 0xFE, 0xFF})) return {"UTF-32BE", 4};
  if (starts(b, {0xFF, 0xFE})) return {"UTF-16LE", 2};
  if (starts(b, {0xFE, 0xFF})) return {"UTF-16BE", 2};
  if (starts(b, {0xEF, 0xBB, 0xBF})) return {"utf-8", 0};  // the table reader skips it
  return {"", 0};
}

// UTF-16 or UTF-32 without a mark: ASCII text in them has NUL bytes in fixed places of each
// 2- or 4-byte unit, where UTF-8 text has none. "" when the first 4 KiB do not look so.
std::string wide_without_mark(const InputBytes& b) {
  const std::size_t n = std::min<std::size_t>(b.size(), 4096) & ~std::size_t{3};
  if (n < 8) return "";
  std::size_t zero[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i)
    if (b.data()[i] == 0) ++zero[i % 4];
  const std::size_t quarter = n / 4;
  auto mostly = [&](std::size_t z) { return z * 10 >= quarter * 9; };
  auto rarely = [&](std::size_t z) { return z * 10 <= quarter; };
  if (mostly(zero[1]) && mostly(zero[2]) && mostly(zero[3]) && rarely(zero[0])) return "utf-32le";
  if (mostly(zero[0]) && mostly(zero[1]) && mostly(zero[2]) && rarely(zero[3])) return "utf-32be";
  if (mostly(zero[1]) && mostly(zero[3]) && rarely(zero[0]) && rarely(zero[2])) return "utf-16le";
  if (mostly(zero[0]) && mostly(zero[2]) && rarely(zero[1]) && rarely(zero[3])) return "utf-16be";
  return "";
}

std::vector<std::uint8_t> convert(const std::uint8_t* data, std::size_t size,
                                  const std::string& from, const std::string& name,
                                  const std::string& option) {
  iconv_t cd = iconv_open("UTF-8", from.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1))
    SLIMTRAIN_THROW(ConfigError, option, ": '", from,
                    "' is no encoding this system's iconv knows (utf-8, utf-16, utf-32, cp1252, "
                    "latin1, gb18030, shift_jis, euc-kr...: `iconv --list` names them all)");
  std::vector<std::uint8_t> out(size + size / 2 + 16);
  char* in = reinterpret_cast<char*>(const_cast<std::uint8_t*>(data));
  std::size_t in_left = size, written = 0;
  bool flushed = false;  // the last call, with no input, ends a stateful encoding's shift
  while (!flushed) {
    char* to = reinterpret_cast<char*>(out.data() + written);
    std::size_t out_left = out.size() - written;
    const bool flush = in_left == 0;
    const std::size_t rc = iconv(cd, flush ? nullptr : &in, &in_left, &to, &out_left);
    const int err = errno;
    written = out.size() - out_left;
    if (rc != static_cast<std::size_t>(-1)) {
      flushed = flush;
      continue;
    }
    if (err == E2BIG) {
      out.resize(out.size() * 2);
      continue;
    }
    iconv_close(cd);
    const auto line =
        1 + std::count(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(written),
                       std::uint8_t{'\n'});
    const std::size_t offset = size - in_left;
    char bytes[16] = "";
    if (in_left > 0)
      std::snprintf(bytes, sizeof bytes, " (0x%02X)", static_cast<unsigned>(data[offset]));
    SLIMTRAIN_THROW(
        DataError, name, ": line ", line, ", byte ", offset, bytes, ": ",
        err == EINVAL ? "a character cut off at the end of the file" : "bytes that are not " + from,
        " (", option, " names the file's encoding)");
  }
  iconv_close(cd);
  out.resize(written);
  return out;
}

}  // namespace

bool is_utf8_name(const std::string& encoding) {
  const std::string e = lowercase(encoding);
  return e == "utf-8" || e == "utf8" || e == "utf_8";
}

InputBytes decode_text(InputBytes bytes, const std::string& name, const std::string& encoding,
                       TextDecoding* how) {
  const std::string option = "--encoding";
  TextDecoding local;
  TextDecoding& d = how != nullptr ? *how : local;
  const auto [marked, mark_length] = byte_order_mark(bytes);
  d = TextDecoding{};
  if (!marked.empty()) {
    d.from = marked;
    d.by_mark = true;
    const std::string named = lowercase(encoding);
    // A mark of another Unicode encoding than the one named is the file's word; a legacy one
    // named for a file with a mark is a contradiction worth saying.
    if (!is_utf8_name(encoding) && named.rfind("utf", 0) != 0)
      SLIMTRAIN_THROW(ConfigError, option, " ", encoding, ": ", name, " begins with a ", marked,
                      " byte order mark: it is ", marked, " (leave --encoding out)");
    if (mark_length == 0) return bytes;  // UTF-8's: the reader skips it and says so
    d.converted = true;
    return InputBytes(
        convert(bytes.data() + mark_length, bytes.size() - mark_length, marked, name, option));
  }
  if (is_utf8_name(encoding)) {
    d.from = "utf-8";
    const std::string wide = wide_without_mark(bytes);
    if (!wide.empty())
      SLIMTRAIN_THROW(DataError, name, " looks like ", wide,
                      " without a byte order mark (NUL bytes between its characters), not UTF-8; "
                      "name its encoding: --encoding ",
                      wide);
    return bytes;
  }
  d.from = encoding;
  d.converted = true;
  return InputBytes(convert(bytes.data(), bytes.size(), encoding, name, option));
}

}  // namespace slimtrain::data
