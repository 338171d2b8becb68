#pragma once
/**
 * @brief What `slimtrain --version` prints: the version, the git commit the binary was built
 * from, and the versions of the libraries it was compiled against (and, for MPI, the one it
 * loaded), the lines a user pastes into a bug report.
 */
#include <string>

namespace slimtrain::cli {

std::string version_text();

}  // namespace slimtrain::cli
