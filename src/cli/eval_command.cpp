#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/not_built.hpp"

namespace slimtrain::cli {

int run_eval(const std::vector<std::string>& args) { return not_built_yet("eval", "needs the trainer", args); }

}  // namespace slimtrain::cli
