#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/not_built.hpp"

namespace slimtrain::cli {

int run_export(const std::vector<std::string>& args) { return not_built_yet("export", "needs checkpoints", args); }

}  // namespace slimtrain::cli
