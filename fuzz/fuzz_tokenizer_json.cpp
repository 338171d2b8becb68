// libFuzzer target: a HuggingFace tokenizer.json as `prep text --tokenizer` reads it (its JSON,
// the model and its vocabulary or inferred type, normalizers, pre-tokenizers, post-processors and
// added tokens with their flags), then a few texts through it: pairs, truncation, bytes that are
// not UTF-8, an added token first.
#include <cstddef>
#include <cstdint>
#include <string>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/hf_tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto t = slimtrain::tokenize::HfTokenizer::parse(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz/tokenizer.json");
    std::int64_t full = 0;
    t.encode({"Hello, WORLD! caf\xc3\xa9 \xe5\x8c\x97\xe4\xba\xac [MASK] \xff\t\n"}, 0, full);
    t.encode({"a pair", "of texts"}, 4, full);
    t.encode({""}, 1, full);
    // Compatibility forms, a combining accent after a ligature, runs of spaces, an added token.
    t.encode({"\xef\xac\x81\xcc\x81x \xef\xbc\xa1  <mask>   the cafe\xcc\x81\xe3\x80\x80"}, 0,
             full);
    // An added token first (Metaspace's first), digits and punctuation in runs, a spacing mark,
    // scripts side by side, a pair cut to an odd length.
    t.encode(
        {"<s>abab 12345 ?!?.. \xe0\xa4\x95\xe0\xa4\xbf abc\xce\xb1\xce\xb2\xe6\x97\xa5", "  a b  "},
        9, full);
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
