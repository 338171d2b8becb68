// libFuzzer target: a slimtrain HDF5 data file, its bytes opened as an in-memory file image
// (HDF5's core driver), through what slimtrain reads of a file: the layout probe's reads (the
// layout and each split's first and last rows), then what `inspect --validate` and the loaders
// read: the layout's attributes, shapes and dtypes, every label, every float for NaN/Inf, and a
// batch of each split. Each input runs in a long-lived child (probe_server.hpp), whose coverage
// the fuzzer sees: one that kills or stalls it inside HDF5 itself is skipped (the binary refuses
// such files with exit 2 when its own probe meets them), one that fails in slimtrain's code is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "probe_server.hpp"
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
// HDF5 loops forever on some damaged heaps; the child gets this long per input (a good one takes
// milliseconds under ASan).
constexpr int kChildMilliseconds = 100;
// Larger inputs are not read (smoke.sh runs with -max_len=65536).
constexpr std::size_t kMaxInput = std::size_t{1} << 22;

// Everything this target reads of the file image `name`, in the binary's order.
void read_all(const std::string& name) {
  using namespace slimtrain::data;
  try {
    // The binary's layout probe first (in its own child there), then what it reads after.
    read_layout_and_edges(name, static_cast<std::size_t>(kMaxFuzzedSample) * 4);
    DatasetInfo info = read_dataset_info(name);
    if (info.sample_elements() > kMaxFuzzedSample) return;
    for (const SplitInfo& s : info.splits)
      if (s.size > kMaxFuzzedSplit / info.sample_elements()) return;
    std::ostringstream report;
    inspect_dataset(name, /*validate=*/true, report);
    // What ensure_normalisation would compute for a file without mean/std is a whole pass over
    // the split; any values do.
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
}
}  // namespace

// Unless ASAN_OPTIONS says otherwise. symbolize=0: the child, forked from a process that may
// already run llvm-symbolizer, failed inside its own reports ("nested bug") when it symbolized,
// and symbolizing cost 2.7x the executions; its stacks still name the HDF5 library, which is all
// probe_server.hpp judges by. Rerun an input with ASAN_OPTIONS=symbolize=1 and
// FUZZ_HDF5_NO_PROBE=1 to read its stack (smoke.sh does). detect_leaks=0: HDF5's error paths
// leak its own allocations.
extern "C" const char* __asan_default_options() {
  return "symbolize=0:detect_leaks=0";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // FUZZ_HDF5_NO_PROBE=1: in this process only, to see the stack of an input the child died on.
  static const bool use_child = std::getenv("FUZZ_HDF5_NO_PROBE") == nullptr;
  static fuzz::ProbeServer child(kName, kMaxInput, kChildMilliseconds, read_all);
  if (use_child) {
    child.run(data, size);  // the child's coverage, or none when HDF5 itself failed on it
    return 0;
  }
  slimtrain::data::set_hdf5_file_image(kName, std::vector<std::uint8_t>(data, data + size));
  read_all(kName);
  return 0;
}
