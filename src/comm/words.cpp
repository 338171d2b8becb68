#include "slimtrain/comm/words.hpp"

#include <algorithm>
#include <cstring>

namespace slimtrain::comm {

void pack_bytes(const std::string& bytes, std::int64_t* words, std::size_t n) {
  if (n == 0) return;  // an empty text has no words, and memset/memcpy must not see a null pointer
  std::memset(words, 0, n * sizeof(std::int64_t));
  std::memcpy(words, bytes.data(), std::min(bytes.size(), n * sizeof(std::int64_t)));
}

void pack_text(const std::string& text, std::int64_t* words, std::size_t n) {
  if (n == 0) return;
  pack_bytes(text.substr(0, n * sizeof(std::int64_t) - 1), words, n);
}

std::string unpack_text(const std::int64_t* words, std::size_t n) {
  const char* p = reinterpret_cast<const char*>(words);
  return std::string(p, strnlen(p, n * sizeof(std::int64_t)));
}

}  // namespace slimtrain::comm
