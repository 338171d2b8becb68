#include <filesystem>
#include <iostream>

#include "slimtrain/ckpt/inspect.hpp"
#include "slimtrain/ckpt/inspect_safetensors.hpp"
#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/data/inspect.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace slimtrain::cli {

int run_inspect(const std::vector<std::string>& args) {
  CommandLine cl("inspect", "slimtrain inspect PATH [--validate | --json]",
                 "Describes an HDF5 data file (splits, shapes, dtypes, classes, label histogram, "
                 "mean/std), verifies and describes a checkpoint (a step-NNNNNNNN directory, "
                 "or a run directory for the checkpoint 'latest' names), or lists the tensors of "
                 "safetensors weights (a .safetensors file, its .index.json, or a HuggingFace "
                 "folder holding them). --validate checks a data file against the layout, and "
                 "reads every tensor of safetensors weights; all exit 2 naming the first "
                 "problem.");
  // clang-format off
  cl.add()
      ("path", po::value<std::string>(), "HDF5 data file, checkpoint directory, or safetensors weights (positional)")
      ("validate", po::bool_switch(), "data file or safetensors: also scan values (NaN/Inf); print 'valid' or exit 2")
      ("json", po::bool_switch(), "checkpoint: print one JSON object instead of text");
  // clang-format on
  cl.positional().add("path", 1);
  if (!cl.parse(args)) return kExitOk;
  if (!cl.has("path")) SLIMTRAIN_THROW(ConfigError, "inspect: give a file or directory");
  std::string path = cl.get<std::string>("path");
  // RUN/checkpoints/latest is a one-line pointer file: inspect the checkpoint it names.
  const std::filesystem::path as_path(path);
  if (as_path.filename() == "latest" && std::filesystem::is_regular_file(as_path) &&
      ckpt::is_checkpoint_path(as_path.parent_path().string()))
    path = as_path.parent_path().string();
  const bool validate = cl.get<bool>("validate");
  if (!ckpt::is_checkpoint_path(path) && ckpt::is_safetensors_path(path)) {
    ckpt::inspect_safetensors(path, validate, std::cout);
    return kExitOk;
  }
  // A checkpoint is always verified (every file against its manifest checksum).
  if (std::filesystem::is_directory(path)) {
    if (!ckpt::is_checkpoint_path(path))
      SLIMTRAIN_THROW(ConfigError, path,
                      ": is a directory but neither a checkpoint (step-NNNNNNNN with a manifest), "
                      "a checkpoints/ directory nor a run directory");
    return ckpt::inspect_checkpoint(path, cl.get<bool>("json"));
  }
  data::probe_data_file(path, data::ProbeOptions{});
  data::inspect_dataset(path, validate, std::cout);
  return kExitOk;
}

}  // namespace slimtrain::cli
