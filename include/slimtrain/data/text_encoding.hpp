#pragma once
/**
 * @brief A text file's bytes as UTF-8, before anything else reads them (`prep text --encoding`).
 *
 * A byte order mark says the file's encoding whatever --encoding says: UTF-8's is left for the
 * reader to skip; UTF-16's and UTF-32's (either byte order) are converted. Without one the file
 * is in `encoding`: utf-8 (the default) is taken as it is, any other name iconv knows (cp1252,
 * latin1, gb18030, shift_jis, utf-16le...) is converted, a byte it cannot convert is DataError
 * naming the line. A file that looks like UTF-16 or UTF-32 without a byte order mark (NUL bytes
 * between its characters) and was given as utf-8 is DataError saying so and naming the option.
 */
#include <string>

#include "slimtrain/data/input_file.hpp"

namespace slimtrain::data {

/** @brief What decoding did, for the log. */
struct TextDecoding {
  std::string from;        ///< the encoding the bytes were read as ("utf-8", "UTF-16LE", "cp1252")
  bool by_mark = false;    ///< a byte order mark said so
  bool converted = false;  ///< the bytes were re-encoded to UTF-8
};

/** @brief Whether `encoding` names UTF-8 (utf-8, UTF8, utf_8). */
bool is_utf8_name(const std::string& encoding);

/**
 * @brief `bytes` (of file `name`) as UTF-8 from `encoding`; ConfigError for a name iconv does not
 * know (naming --encoding), DataError for bytes that are not in the encoding.
 */
InputBytes decode_text(InputBytes bytes, const std::string& name, const std::string& encoding,
                       TextDecoding* how = nullptr);

}  // namespace slimtrain::data
