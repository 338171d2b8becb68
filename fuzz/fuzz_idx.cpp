// libFuzzer target: the IDX parser and record reads over whatever it accepts.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/idx_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const slimtrain::data::IdxArray array = slimtrain::data::parse_idx(data, size, "fuzz.idx");
    // Real reads are bounded by the payload; with no records the sample buffer would not be.
    if (array.dims.size() != 3 || array.dims[0] == 0 || array.dims[0] > 100000) return 0;
    // Matching labels, so the image file's records are read end to end.
    const auto n = static_cast<std::uint32_t>(array.dims[0]);
    std::vector<std::uint8_t> labels{0,
                                     0,
                                     8,
                                     1,
                                     std::uint8_t(n >> 24),
                                     std::uint8_t(n >> 16),
                                     std::uint8_t(n >> 8),
                                     std::uint8_t(n)};
    labels.resize(labels.size() + n, 1);
    slimtrain::data::IdxSource source(std::vector<std::uint8_t>(data, data + size), "fuzz.idx",
                                      labels, "labels.idx");
    std::vector<std::uint8_t> sample(static_cast<std::size_t>(source.sample_elements()));
    for (std::int64_t i = 0; i < source.size(); ++i) source.read(i, sample.data());
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
