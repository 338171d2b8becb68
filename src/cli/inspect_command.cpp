#include <filesystem>
#include <iostream>

#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/data/inspect.hpp"

namespace slimtrain::cli {
namespace {

// A checkpoint is a directory; its inspection belongs to the checkpoint part.
int inspect_checkpoint(const std::string& path, bool) {
  SLIMTRAIN_THROW(ConfigError, path,
                  ": is a directory; checkpoint inspection is not available in this build");
}

}  // namespace

int run_inspect(const std::vector<std::string>& args) {
  CommandLine cl("inspect", "slimtrain inspect PATH [--validate]",
                 "Describes an HDF5 data file (splits, shapes, dtypes, classes, label histogram, "
                 "mean/std) or a checkpoint directory. --validate checks the file against the "
                 "layout and exits 2 naming the first problem.");
  // clang-format off
  cl.add()
      ("path", po::value<std::string>(), "HDF5 data file or checkpoint directory (positional)")
      ("validate", po::bool_switch(), "also scan values (NaN/Inf); print 'valid' or exit 2");
  // clang-format on
  cl.positional().add("path", 1);
  if (!cl.parse(args)) return kExitOk;
  if (!cl.has("path")) SLIMTRAIN_THROW(ConfigError, "inspect: give a file or directory");
  const std::string path = cl.get<std::string>("path");
  const bool validate = cl.get<bool>("validate");
  if (std::filesystem::is_directory(path)) return inspect_checkpoint(path, validate);
  data::inspect_dataset(path, validate, std::cout);
  return kExitOk;
}

}  // namespace slimtrain::cli
