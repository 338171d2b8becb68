// A file written the way users write one with h5py (variable- or fixed-length string
// attributes, [N, C, H, W] uint8 images, int32 labels) is accepted by the loaders as is.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/eval_loader.hpp"
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
