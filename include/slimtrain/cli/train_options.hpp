#pragma once
/**
 * @brief `slimtrain train`'s options: the table --help prints, the INI file (--config) and every
 * value's check, without LibTorch (fuzz/fuzz_ini.cpp runs it on arbitrary INI files).
 */
#include <string>
#include <vector>

#include "slimtrain/train/config.hpp"

namespace slimtrain::cli {

/**
 * @brief Fills `config` from the command line and its --config file; false after printing --help
 * (the caller exits 0). ConfigError naming the option (or the INI file) for a bad value.
 */
bool parse_train_options(const std::vector<std::string>& args, train::TrainConfig& config);

}  // namespace slimtrain::cli
