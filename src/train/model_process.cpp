// The start of a process that runs a model (train, eval): the heap's settings (runtime) and the
// data file's probe (data), in the order both need, before MPI starts threads.
#include "slimtrain/train/model_process.hpp"

#include "slimtrain/data/layout_probe.hpp"
#include "slimtrain/runtime/heap.hpp"

namespace slimtrain::train {

void start_model_process(const std::string& path, double io_timeout_s) {
  runtime::keep_freed_memory();
  data::probe_data_file(path, data::ProbeOptions{io_timeout_s, "--io-timeout"});
}

}  // namespace slimtrain::train
