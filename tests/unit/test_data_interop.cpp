// A file written the way users write one with h5py (variable- or fixed-length string
// attributes, [N, C, H, W] uint8 images, int32 labels) is accepted by the loaders as is.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/eval_loader.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/inspect.hpp"
#include "slimtrain/data/train_loader.hpp"

namespace sd = slimtrain::data;

namespace {

std::string write_with_h5py(const std::string& name, const std::string& flags) {
  const std::string path = ::testing::TempDir() + "/" + name;
  const std::string command = "/usr/bin/python3 " SLIMTRAIN_TEST_SOURCE_DIR
                              "/tests/e2e/data_files.py write-h5py " +
                              path + " " + flags;
  return std::system(command.c_str()) == 0 ? path : "";
}

bool have_h5py() {
  return std::system("/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null") == 0;
}

}  // namespace

TEST(H5pyInterop, LoadersAcceptUserWrittenFiles) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 with h5py and numpy is not installed";
  for (const std::string flags : {"", "--fixed-strings"}) {
    const std::string path = write_with_h5py("user.h5", flags);
    ASSERT_FALSE(path.empty()) << "h5py could not write the file";
    const sd::DatasetInfo info = sd::read_dataset_info(path);
    EXPECT_EQ(info.class_names, (std::vector<std::string>{"cat", "dog", "eel"})) << flags;
    EXPECT_EQ(info.num_classes, 3);
    EXPECT_EQ(info.input_shape(), (std::vector<std::int64_t>{3, 3, 4}));
    ASSERT_EQ(info.mean.size(), 3u);

    // The test split holds samples 8 and 9 of x = (flat index * 7) % 256, labels i % 3.
    sd::EvalLoader eval(path, "test", 0, 1, 16);
    sd::Batch b;
    ASSERT_TRUE(eval.next(b));
    ASSERT_EQ(b.x.sizes(), (std::vector<std::int64_t>{2, 3, 3, 4}));
    auto x = b.x.accessor<float, 4>();
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(b.y[i].item<std::int64_t>(), (8 + i) % 3);
      for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 3; ++h)
          for (int w = 0; w < 4; ++w) {
            const long flat = (((8L + i) * 3 + c) * 3 + h) * 4 + w;
            const float raw = static_cast<float>((flat * 7) % 256);
            ASSERT_NEAR(x[i][c][h][w], (raw - info.mean[c]) / info.std[c], 1e-4);
          }
    }
    EXPECT_FALSE(eval.next(b));

    sd::LoaderOptions options;
    options.batch_size = 3;
    for (const char* mode : {"memory", "stream"}) {
      options.mode = mode;
      sd::TrainLoader train(path, "train", 0, 1, options);
      train.start_epoch(0);
      std::int64_t seen = 0;
      while (train.next(b)) seen += b.y.size(0);
      EXPECT_EQ(seen, 8) << mode;
    }
  }
}

TEST(H5pyInterop, LoaderNamesTheRowOfABadLabel) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 with h5py and numpy is not installed";
  const std::string path = write_with_h5py("bad.h5", "--bad-label");
  ASSERT_FALSE(path.empty());
  try {
    sd::TrainLoader loader(path, "train", 0, 1, {});
    FAIL() << "label 7 of 3 classes accepted";
  } catch (const slimtrain::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/train/y row 3: label 7"), std::string::npos) << e.what();
  }
}

// An in-memory image of a file (what fuzz/fuzz_hdf5.cpp feeds) reads exactly as the file does,
// and bytes that are no HDF5 file get the same clear DataError naming the name they were given.
TEST(H5pyInterop, FileImagesReadAsTheFile) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 with h5py and numpy is not installed";
  const std::string path = write_with_h5py("image.h5", "");
  ASSERT_FALSE(path.empty());
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  sd::set_hdf5_file_image("memory.h5", bytes);
  const sd::DatasetInfo file = sd::read_dataset_info(path);
  const sd::DatasetInfo image = sd::read_dataset_info("memory.h5");
  EXPECT_EQ(image.class_names, file.class_names);
  EXPECT_EQ(image.sample_shape, file.sample_shape);
  EXPECT_EQ(image.mean, file.mean);
  ASSERT_EQ(image.splits.size(), file.splits.size());
  std::ostringstream file_report, image_report;
  sd::inspect_dataset(path, true, file_report);
  sd::inspect_dataset("memory.h5", true, image_report);
  std::string expected = file_report.str();
  for (std::size_t at; (at = expected.find(path)) != std::string::npos;)
    expected.replace(at, path.size(), "memory.h5");
  EXPECT_EQ(image_report.str(), expected);

  bytes.resize(bytes.size() / 2);  // truncated: the superblock is there, the objects are not
  sd::set_hdf5_file_image("half.h5", bytes);
  EXPECT_THROW(sd::read_dataset_info("half.h5"), slimtrain::DataError);
  sd::set_hdf5_file_image("text.h5", std::vector<std::uint8_t>(100, 'x'));
  try {
    sd::read_dataset_info("text.h5");
    FAIL() << "100 bytes of text read as an HDF5 file";
  } catch (const slimtrain::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("text.h5: not an HDF5 file"), std::string::npos)
        << e.what();
  }
}
