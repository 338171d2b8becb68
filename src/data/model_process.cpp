// The start of a process that runs a model (layout_probe.hpp): apart from the probe, which the
// fuzz targets build without the runtime part.
#include "slimtrain/data/layout_probe.hpp"
#include "slimtrain/runtime/heap.hpp"

namespace slimtrain::data {

void start_model_process(const std::string& path, double io_timeout_s) {
  runtime::keep_freed_memory();
  probe_data_file(path, ProbeOptions{io_timeout_s, "--io-timeout"});
}

}  // namespace slimtrain::data
