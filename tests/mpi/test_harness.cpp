// Checks the mpi tier's own harness: ranks see each other, failures agree, the watchdog fires.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/error.hpp"

TEST(MpiHarness, RanksSeeEachOther) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_GE(size, 2) << "the mpi tier runs under mpiexec -np >= 2";
  long long sum = 0, mine = rank + 1;
  SLIMTRAIN_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  EXPECT_EQ(sum, static_cast<long long>(size) * (size + 1) / 2);
  EXPECT_EQ(slimtrain::process_rank(), rank);
}

TEST(MpiHarness, MpiErrorsBecomeCommErrorNamingTheCall) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int value = 0;
  try {
    SLIMTRAIN_CHECK_MPI(MPI_Bcast(&value, -1, MPI_INT, 0, MPI_COMM_WORLD));
    FAIL() << "negative count accepted";
  } catch (const slimtrain::CommError& e) {
    EXPECT_NE(std::string(e.what()).find("MPI_Bcast"), std::string::npos) << e.what();
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

// Run only by watchdog_selftest.sh: rank 0 hangs, and the watchdog must end the job.
TEST(MpiHarness, WatchdogSelfTestHangs) {
  if (!std::getenv("SLIMTRAIN_WATCHDOG_SELFTEST"))
    GTEST_SKIP() << "run by watchdog_selftest.sh only";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::this_thread::sleep_for(std::chrono::hours(1));
  MPI_Barrier(MPI_COMM_WORLD);
}
