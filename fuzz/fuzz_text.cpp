// libFuzzer target: `prep text`'s record reader (CSV, TSV, JSONL; quotes, headers, keys; byte
// order marks; TSV read literally or with CSV's quotes, CSV the other way round) and the check of
// the texts' bytes (invalid UTF-8, NUL). The first byte picks the format, the quoting and the
// columns.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/text_check.hpp"
#include "slimtrain/data/text_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using slimtrain::data::TextFormat;
  const TextFormat format = (data[0] & 3) == 0   ? TextFormat::csv
                            : (data[0] & 3) == 1 ? TextFormat::tsv
                                                 : TextFormat::jsonl;
  slimtrain::data::TextColumns columns;
  const bool named = format == TextFormat::jsonl || (data[0] & 4);
  columns.text = {named ? "text" : "1"};
  if (data[0] & 8) columns.text.push_back(named ? "text2" : "2");
  columns.label = named ? "label" : (data[0] & 16) ? "first" : "last";
  columns.header = data[0] & 32;
  // 64: the other quoting than the format's default (TSV with CSV's quotes, CSV literally).
  if (data[0] & 64)
    columns.quoting =
        format == TextFormat::tsv ? slimtrain::data::Quoting::csv : slimtrain::data::Quoting::none;
  try {
    slimtrain::data::TextTable table(std::vector<std::uint8_t>(data + 1, data + size), "fuzz.txt",
                                     format, columns);
    for (std::int64_t i = 0; i < table.size(); ++i) {
      try {
        for (const std::string& text : table.read(i).texts) slimtrain::data::text_flaws(text);
        table.describe_record(i);
      } catch (const slimtrain::DataError&) {
      }
    }
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
