// The `slimtrain` binary: all behaviour lives in the cli part; see slimtrain/cli/app.hpp.
#include "slimtrain/cli/app.hpp"

int main(int argc, char** argv) {
  return slimtrain::cli::run_main(argc, argv);
}
