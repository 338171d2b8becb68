// libFuzzer target: CSV indexing and record parsing. The first byte picks the options.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/csv_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  slimtrain::data::CsvOptions options;
  options.header = data[0] & 1;
  options.label_column = (data[0] & 2) ? "first" : (data[0] & 4) ? "1" : "last";
  options.delimiter = (data[0] & 8) ? ';' : ',';
  try {
    slimtrain::data::CsvSource source(std::vector<std::uint8_t>(data + 1, data + size), "fuzz.csv",
                                      options);
    std::vector<float> sample(static_cast<std::size_t>(source.sample_elements()));
    for (std::int64_t i = 0; i < source.size(); ++i) {
      try {
        source.read(i, sample.data());
      } catch (const slimtrain::DataError&) {
      }
    }
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
