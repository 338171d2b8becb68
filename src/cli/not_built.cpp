#include "slimtrain/cli/not_built.hpp"

#include <iostream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::cli {

int not_built_yet(const char* command, const char* what, const std::vector<std::string>& args) {
  const bool help = !args.empty() && (args[0] == "--help" || args[0] == "-h");
  (help ? std::cout : std::cerr) << "slimtrain " << command
                                 << ": not implemented in this build yet (" << what << ")\n";
  return help ? kExitOk : kExitUsage;
}

}  // namespace slimtrain::cli
