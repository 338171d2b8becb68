// The slimtrain runtime of an mpi-tier test process: made on first use (after the test main has
// initialised MPI) and kept until exit, so every test of the process shares one communicator set.
#pragma once

#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain_test {

inline slimtrain::runtime::Runtime& rt() {
  static slimtrain::runtime::Runtime instance;
  return instance;
}

}  // namespace slimtrain_test
