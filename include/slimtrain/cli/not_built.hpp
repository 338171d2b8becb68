#pragma once
/** @brief For a subcommand whose part has not landed yet: says so plainly and exits 2. */
#include <string>
#include <vector>

namespace slimtrain::cli {
int not_built_yet(const char* command, const char* what, const std::vector<std::string>& args);
}  // namespace slimtrain::cli
