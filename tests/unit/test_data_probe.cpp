// The layout probe (data/layout_probe.hpp): a file's layout is read in a child process first, so
// that HDF5 crashing or hanging there becomes a DataError; a DataError there arrives unchanged.
// The damaged files fuzz_hdf5 found are run through the binary in e2e_damaged_hdf5.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace sd = slimtrain::data;

namespace {

std::string probe_error(const std::string& path, const sd::ProbeOptions& options) {
  try {
    sd::probe_data_file(path, options);
  } catch (const slimtrain::DataError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(LayoutProbe, AGoodFilePassesAndADataErrorArrivesUnchanged) {
  const std::string path = ::testing::TempDir() + "/probe.h5";
  const std::string command = "/usr/bin/python3 " SLIMTRAIN_TEST_SOURCE_DIR
                              "/tests/e2e/data_files.py write-h5py " +
                              path + " 2>/dev/null";
  if (std::system(command.c_str()) != 0)
    GTEST_SKIP() << "/usr/bin/python3 with h5py and numpy could not write a file";
  EXPECT_EQ(probe_error(path, sd::ProbeOptions{}), "");

  const std::string missing = ::testing::TempDir() + "/no-such.h5";
  std::string direct;
  try {
    sd::read_dataset_info(missing);
  } catch (const slimtrain::DataError& e) {
    direct = e.what();
  }
  ASSERT_FALSE(direct.empty());
  EXPECT_EQ(probe_error(missing, sd::ProbeOptions{}), direct);
}

TEST(LayoutProbe, ACrashInTheChildIsADataErrorNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/crash.h5";
  const std::string what =
      probe_error(path, sd::ProbeOptions{10.0, "--test", [] { std::abort(); }});
  EXPECT_TRUE(contains(what, path + ": HDF5 crashed reading this (Aborted")) << what;
}

TEST(LayoutProbe, AHangInTheChildEndsAtTheDeadline) {
  const std::string path = ::testing::TempDir() + "/hang.h5";
  const auto start = std::chrono::steady_clock::now();
  const std::string what = probe_error(path, sd::ProbeOptions{0.5, "--test", [] {
                                                                for (;;) pause();
                                                              }});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(contains(what, path + ": HDF5 did not finish reading this within 0.5 s (--test"))
      << what;
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 5.0);
}
