#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/train_options.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/train/trainer.hpp"

namespace slimtrain::cli {

int run_train(const std::vector<std::string>& args) {
  train::TrainConfig config;
  if (!parse_train_options(args, config)) return kExitOk;  // after --help
  files::check_output_directory(config.out, "--out");      // before any work, on every rank
  return train::run_training(config);
}

}  // namespace slimtrain::cli
