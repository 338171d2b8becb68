// libFuzzer target: a slimtrain HDF5 data file, its bytes opened as an in-memory file image
// (HDF5's core driver), through what slimtrain does with a file: first the layout probe (the
// layout and each split's first and last rows, read in a child process, so that HDF5 crashing or
// hanging on damaged metadata is a DataError), then in this process what `inspect --validate` and
// the loaders read: the layout's attributes, shapes and dtypes, every label, every float for
// NaN/Inf, and a batch of each split.
#include <sanitizer/common_interface_defs.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/inspect.hpp"
#include "slimtrain/data/layout_probe.hpp"
#include "slimtrain/data/split_reader.hpp"

namespace {
constexpr const char* kName = "fuzz.h5";
// Reading a split costs time in proportion to the rows it declares, not to the input's size (a
// few bytes can declare 2^40 rows of fill values): past these bounds only the layout is checked,
// as a slow input is not a crash. 2^22 elements per split keep --validate's scan under a second.
constexpr std::int64_t kMaxFuzzedSample = 1 << 16;
constexpr std::int64_t kMaxFuzzedSplit = 1 << 22;
constexpr std::int64_t kBatch = 32;
// HDF5 loops forever on some damaged heaps; the probe's child gets this long.
constexpr double kProbeSeconds = 1.0;

// In the probe's child a sanitizer report must not reach libFuzzer's death callback, which
// would save the input as this target's crash: the child's death is the probe's verdict.
void quiet_child() {
  __sanitizer_set_death_callback(nullptr);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slimtrain::data;
  set_hdf5_file_image(kName, std::vector<std::uint8_t>(data, data + size));
  try {
    probe_data_file(kName, ProbeOptions{kProbeSeconds, "fuzz_hdf5", quiet_child});
    DatasetInfo info = read_dataset_info(kName);
    if (info.sample_elements() > kMaxFuzzedSample) return 0;
    for (const SplitInfo& s : info.splits)
      if (s.size > kMaxFuzzedSplit / info.sample_elements()) return 0;
    std::ostringstream report;
    inspect_dataset(kName, /*validate=*/true, report);
    // What ensure_normalisation computes for a file without mean/std needs MPI; any values do.
    if (info.mean.empty()) {
      info.mean.assign(static_cast<std::size_t>(info.channels()), 0.0f);
      info.std.assign(static_cast<std::size_t>(info.channels()), 1.0f);
    }
    for (const SplitInfo& s : info.splits) {
      SplitReader reader(info, s.name);
      const std::int64_t rows = std::min<std::int64_t>(kBatch, reader.size());
      std::vector<std::uint8_t> raw(static_cast<std::size_t>(rows) * reader.sample_bytes() + 1);
      std::vector<std::int64_t> labels(static_cast<std::size_t>(rows) + 1);
      std::vector<float> out(static_cast<std::size_t>(rows * info.sample_elements()) + 1);
      reader.read_x(0, rows, raw.data());
      reader.read_y(0, rows, labels.data());
      reader.normalize(raw.data(), rows, out.data());
    }
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
