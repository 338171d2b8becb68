// The GPU step's batches (data::BatchForm::raw, finished by data::BatchNormaliser) against the
// CPU's, which are what they always were: bit for bit equal, every batch of two epochs, for a
// file of uint8 images (layout 1, three channels, both loader modes) and the multimodal layout-2
// file (uint8 pixel_values with mean/std, ragged input_ids with masks). Here on the CPU; on a
// GPU the same operations run there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "slimtrain/data/batch_normaliser.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/data/train_loader.hpp"

namespace sd = slimtrain::data;

namespace {

std::string made_by(const std::string& script, const std::string& args, const std::string& file) {
  if (std::system("/usr/bin/python3 -c 'import h5py, numpy, torch' 2>/dev/null") != 0) return "";
  const std::string dir = ::testing::TempDir();
  const std::string command =
      "/usr/bin/python3 " SLIMTRAIN_TEST_SOURCE_DIR "/tests/e2e/" + script + " " + dir + args;
  return std::system(command.c_str()) == 0 ? dir + file : "";
}

void expect_same_batches(const std::string& path, const std::string& mode) {
  const sd::DatasetInfo info = sd::read_normalised_info(path);
  sd::LoaderOptions options;
  options.batch_size = 3;
  options.mode = mode;
  sd::TrainLoader host(info, "train", 0, 1, options);
  options.form.raw = true;
  sd::TrainLoader raw(info, "train", 0, 1, options);
  const sd::BatchNormaliser normaliser(info, torch::Device(torch::kCPU));
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    host.start_epoch(epoch);
    raw.start_epoch(epoch);
    sd::Batch a, b;
    int batches = 0;
    while (host.next(a)) {
      ASSERT_TRUE(raw.next(b));
      ASSERT_TRUE(b.raw);
      const sd::Batch finished = normaliser.finish(b);
      EXPECT_FALSE(finished.raw);
      EXPECT_TRUE(torch::equal(finished.y, a.y));
      if (a.x.defined()) {
        EXPECT_NE(b.x.scalar_type(), torch::kFloat32) << "a raw batch of uint8 images is uint8";
        EXPECT_TRUE(torch::equal(finished.x, a.x)) << "epoch " << epoch << " batch " << batches;
      }
      ASSERT_EQ(finished.inputs.size(), a.inputs.size());
      for (std::size_t i = 0; i < a.inputs.size(); ++i)
        EXPECT_TRUE(torch::equal(finished.inputs[i].second, a.inputs[i].second))
            << a.inputs[i].first << " epoch " << epoch << " batch " << batches;
      ++batches;
    }
    EXPECT_FALSE(raw.next(b));
    EXPECT_GT(batches, 1);
  }
}

}  // namespace

TEST(BatchNormaliser, RawImagesFinishedEqualTheHostsBatches) {
  const std::string path = made_by("data_files.py write-h5py", "/raw.h5", "/raw.h5");
  if (path.empty()) GTEST_SKIP() << "/usr/bin/python3 lacks h5py, numpy or torch";
  for (const std::string mode : {"memory", "stream"}) expect_same_batches(path, mode);
}

TEST(BatchNormaliser, RawNamedInputsFinishedEqualTheHostsBatches) {
  const std::string path = made_by("named_inputs.py", "", "/mm.h5");
  if (path.empty()) GTEST_SKIP() << "/usr/bin/python3 lacks h5py, numpy or torch";
  expect_same_batches(path, "auto");
}
