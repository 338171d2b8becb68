// libFuzzer target: the .npy header parser and conversion of every record it accepts.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/npy_source.hpp"

namespace {
// A valid int64 label array of n entries.
std::vector<std::uint8_t> labels(std::int64_t n) {
  std::string header =
      "{'descr': '<i8', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
  header.resize(118, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) +
                      char(header.size() >> 8) + header;
  std::vector<std::uint8_t> out(bytes.begin(), bytes.end());
  out.resize(out.size() + static_cast<std::size_t>(n) * 8, 0);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const slimtrain::data::NpyArray array = slimtrain::data::parse_npy(data, size, "fuzz.npy");
    // Real reads are bounded by the payload; with no records the sample buffer would not be.
    if (array.shape.empty() || array.shape[0] == 0 || array.shape[0] > 100000) return 0;
    slimtrain::data::NpySource source(std::vector<std::uint8_t>(data, data + size), "fuzz.npy",
                                      labels(array.shape[0]), "labels.npy");
    std::vector<float> sample(static_cast<std::size_t>(source.sample_elements()) + 1);
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
