// Layout 2 through the loaders, on the multimodal file tests/e2e/named_inputs.py writes with
// h5py: named batches, ragged inputs padded to a multiple of 8 with their masks, --max-length,
// and --group-by-length's order (deterministic, the same rows, less padding).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/eval_loader.hpp"
#include "slimtrain/data/named_split.hpp"
#include "slimtrain/data/train_loader.hpp"

namespace sd = slimtrain::data;

namespace {

std::string multimodal_file() {
  static std::string path;
  if (!path.empty()) return path;
  if (std::system("/usr/bin/python3 -c 'import h5py, numpy, torch' 2>/dev/null") != 0) return "";
  const std::string dir = ::testing::TempDir();
  const std::string command =
      "/usr/bin/python3 " SLIMTRAIN_TEST_SOURCE_DIR "/tests/e2e/named_inputs.py " + dir;
  if (std::system(command.c_str()) == 0) path = dir + "/mm.h5";
  return path;
}

const torch::Tensor& input(const sd::Batch& b, const std::string& name) {
  for (const auto& [n, t] : b.inputs)
    if (n == name) return t;
  throw std::runtime_error("no input " + name);
}

}  // namespace

TEST(NamedInputs, BatchesArePaddedWithTheirMasks) {
  const std::string path = multimodal_file();
  if (path.empty()) GTEST_SKIP() << "/usr/bin/python3 lacks h5py, numpy or torch";
  sd::DatasetInfo info = sd::read_dataset_info(path);
  ASSERT_TRUE(info.named());
  EXPECT_EQ(info.input_names(), (std::vector<std::string>{"input_ids", "pixel_values"}));
  sd::NamedSplit split(info, "train");
  std::vector<std::int64_t> rows(10);
  std::iota(rows.begin(), rows.end(), 0);
  const sd::Batch b = split.batch(rows.data(), 10);
  ASSERT_EQ(b.inputs.size(), 3u);  // input_ids, attention_mask, pixel_values
  EXPECT_EQ(b.inputs[1].first, "attention_mask");
  const torch::Tensor ids = input(b, "input_ids");
  const torch::Tensor mask = input(b, "attention_mask");
  std::int64_t longest = 0;
  for (std::int64_t r : rows) longest = std::max(longest, split.length(r));
  EXPECT_EQ(ids.size(1) % 8, 0);
  EXPECT_GE(ids.size(1), longest);
  EXPECT_LT(ids.size(1), longest + 8);
  for (std::int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(mask[i].sum().item<std::int64_t>(), split.length(rows[static_cast<std::size_t>(i)]));
    EXPECT_TRUE(torch::equal(ids[i].masked_select(mask[i] == 0),
                             torch::zeros({ids.size(1) - split.length(i)}, torch::kInt64)))
        << "padding is not pad_id 0";
  }
  const torch::Tensor px = input(b, "pixel_values");
  EXPECT_EQ(px.scalar_type(), torch::kFloat32);
  EXPECT_EQ(px.sizes(), (std::vector<std::int64_t>{10, 3, 8, 8}));
  EXPECT_LT(px.abs().max().item<float>(), 3.0f) << "mean/std (100/60) not applied";

  info.max_length = 12;
  sd::NamedSplit cut(info, "train");
  const sd::Batch c = cut.batch(rows.data(), 10);
  EXPECT_LE(input(c, "input_ids").size(1), 12);
  EXPECT_LE(input(c, "attention_mask").sum(1).max().item<std::int64_t>(), 12);

  // Every test sample once over two ranks' shares.
  std::int64_t seen = 0;
  for (int rank = 0; rank < 2; ++rank) {
    sd::EvalLoader eval(info, "test", rank, 2, 16);
    sd::Batch e;
    while (eval.next(e)) seen += e.size();
  }
  EXPECT_EQ(seen, 37);
}

TEST(NamedInputs, GroupByLengthIsDeterministicAndPadsLess) {
  const std::string path = multimodal_file();
  if (path.empty()) GTEST_SKIP() << "/usr/bin/python3 lacks h5py, numpy or torch";
  const sd::DatasetInfo info = sd::read_dataset_info(path);
  sd::LoaderOptions plain;
  plain.batch_size = 8;
  plain.seed = 5;
  sd::LoaderOptions grouped = plain;
  grouped.group_by_length = true;
  sd::TrainLoader a(info, "train", 1, 2, plain), g1(info, "train", 1, 2, grouped),
      g2(info, "train", 1, 2, grouped), a0(info, "train", 0, 2, plain),
      g0(info, "train", 0, 2, grouped);
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::int64_t> rows = a.epoch_rows(epoch), by_length = g1.epoch_rows(epoch);
    EXPECT_EQ(by_length, g2.epoch_rows(epoch)) << "not a function of (seed, epoch)";
    EXPECT_NE(by_length, rows);
    EXPECT_EQ(by_length.size(), rows.size()) << "a rank's share changed size";
    // The ranks group the epoch together: between them they read the rows they read without it.
    const std::vector<std::int64_t> x0 = a0.epoch_rows(epoch), y0 = g0.epoch_rows(epoch);
    std::vector<std::int64_t> x = rows, y = by_length;
    x.insert(x.end(), x0.begin(), x0.end());
    y.insert(y.end(), y0.begin(), y0.end());
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    EXPECT_EQ(x, y) << "grouping changed which rows the ranks read";
    double plain_pad = 0, grouped_pad = 0;
    for (std::size_t at = 0; at + 8 <= rows.size(); at += 8) {
      plain_pad += a.named()->padding_fraction(rows.data() + at, 8);
      grouped_pad += a.named()->padding_fraction(by_length.data() + at, 8);
      // Batch k of both ranks comes from one global batch: lengths of one sorted run.
      const std::int64_t longest1 = a.named()->length(by_length[at]);
      const std::int64_t shortest0 = a.named()->length(y0[at + 7]);
      EXPECT_GE(shortest0, longest1) << "rank 0's batch " << at / 8 << " is not the longer half";
    }
    EXPECT_LT(grouped_pad, plain_pad * 0.7) << "epoch " << epoch;
  }
  sd::LoaderOptions stream = plain;
  stream.mode = "stream";
  EXPECT_THROW(sd::TrainLoader(info, "train", 0, 1, stream), slimtrain::ConfigError);
}
