#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/not_built.hpp"

namespace slimtrain::cli {

int run_inspect(const std::vector<std::string>& args) { return not_built_yet("inspect", "needs the HDF5 data part", args); }

}  // namespace slimtrain::cli
