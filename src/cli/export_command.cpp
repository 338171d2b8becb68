#include <iostream>

#include "slimtrain/ckpt/export_weights.hpp"
#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"

namespace slimtrain::cli {

int run_export(const std::vector<std::string>& args) {
  CommandLine cl(
      "export", "slimtrain export --checkpoint PATH -o weights.h5 [--force]",
      "Writes a checkpoint's weights to HDF5: one dataset per parameter and buffer under "
      "its parameter name (e.g. /conv1.weight), plus a root attribute 'model_spec' "
      "(JSON). The checkpoint is verified first; the output appears atomically.");
  cl.add()("checkpoint", po::value<std::string>(),
           "a checkpoint directory (RUN_DIR/checkpoints/step-NNNNNNNN), or a run directory for "
           "its newest checkpoint that verifies")("output,o", po::value<std::string>(),
                                                  "the HDF5 file to write")(
      "force", po::bool_switch(), "replace an existing output file")(
      "embeddings", po::bool_switch(),
      "export features instead of weights (needs --data; not in this build)")(
      "data", po::value<std::string>(), "HDF5 data file for --embeddings");
  cl.set_epilog(
      "Load in PyTorch:\n"
      "  import h5py, torch\n"
      "  with h5py.File('weights.h5') as f:\n"
      "      sd = {k: torch.from_numpy(f[k][()]) for k in f.keys()}\n"
      "  model.load_state_dict(sd)\n"
      "exit codes: 0 written, 2 bad option, existing output, or a checkpoint that does not "
      "verify\n");
  if (!cl.parse(args)) return kExitOk;
  if (cl.get<bool>("embeddings"))
    SLIMTRAIN_THROW(ConfigError,
                    "--embeddings: exporting embeddings needs --data and the "
                    "trainer's feature call, which are not in this build yet");
  if (!cl.has("checkpoint")) SLIMTRAIN_THROW(ConfigError, "--checkpoint is required");
  if (!cl.has("output")) SLIMTRAIN_THROW(ConfigError, "-o/--output is required");
  const std::string output = cl.get<std::string>("output");
  const std::string used =
      ckpt::export_weights(cl.get<std::string>("checkpoint"), output, cl.get<bool>("force"));
  std::cout << "exported " << used << " -> " << output << "\n";
  return kExitOk;
}

}  // namespace slimtrain::cli
