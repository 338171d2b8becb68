// The slimtrain runtime of an mpi-tier test process: made on first use (after the test main has
// initialised MPI) and kept until exit, so every test of the process shares one communicator set.
#pragma once

#include <functional>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain_test {

inline slimtrain::runtime::Runtime& rt() {
  static slimtrain::runtime::Runtime instance;
  return instance;
}

/** @brief Runs `cleanup` before the test main calls MPI_Finalize (mpi_test_main.cpp). */
void before_finalize(std::function<void()> cleanup);

/** @brief A control plane for tests that need one (link slimtrain_comm to use it). */
inline slimtrain::comm::ControlPlane& control() {
  // Freed before MPI_Finalize: a communicator outliving MPI would crash at exit.
  static slimtrain::comm::ControlPlane* instance = [] {
    auto* plane = new slimtrain::comm::ControlPlane(rt(), "test-control");
    before_finalize([plane] { delete plane; });
    return plane;
  }();
  return *instance;
}

}  // namespace slimtrain_test
