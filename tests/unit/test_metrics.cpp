#include <gtest/gtest.h>
#include <torch/torch.h>

#include "slimtrain/core/error.hpp"
#include "slimtrain/eval/metrics.hpp"

using namespace slimtrain;
using eval::EvalStats;

namespace {

// Logits whose argmax is `pred` for every row.
torch::Tensor logits_for(const std::vector<std::int64_t>& pred, std::int64_t classes) {
  auto logits = torch::zeros({static_cast<std::int64_t>(pred.size()), classes});
  for (std::size_t i = 0; i < pred.size(); ++i) logits[i][pred[i]] = 2.0;
  return logits;
}

torch::Tensor labels_of(const std::vector<std::int64_t>& y) {
  return torch::tensor(y, torch::kLong);
}

}  // namespace

TEST(EvalStats, ConfusionAndCountsOfAHandMadeBatch) {
  EvalStats stats(3);
  stats.add_batch(logits_for({0, 1, 1, 2, 0, 2}, 3), labels_of({0, 0, 1, 2, 2, 2}), 3.0);
  EXPECT_EQ(stats.count(), 6);
  EXPECT_DOUBLE_EQ(stats.loss_sum(), 3.0);
  // rows = true class, columns = prediction
  EXPECT_EQ(stats.confusion(), (std::vector<std::int64_t>{1, 1, 0,  //
                                                          0, 1, 0,  //
                                                          1, 0, 2}));
  stats.add_batch(logits_for({2}, 3).to(torch::kDouble), labels_of({1}).to(torch::kInt), 0.5);
  EXPECT_EQ(stats.at(1, 2), 1);
  EXPECT_EQ(stats.count(), 7);
  EXPECT_DOUBLE_EQ(stats.loss_sum(), 3.5);
}

TEST(EvalStats, MetricsOfTheHandMadeBatch) {
  EvalStats stats(3);
  stats.add_batch(logits_for({0, 1, 1, 2, 0, 2}, 3), labels_of({0, 0, 1, 2, 2, 2}), 3.0);
  const auto m = eval::compute_metrics(stats, {"cat", "dog", "eel"});
  EXPECT_EQ(m.count, 6);
  EXPECT_DOUBLE_EQ(m.accuracy, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.mean_loss, 0.5);
  ASSERT_EQ(m.per_class.size(), 3u);
  EXPECT_EQ(m.per_class[1].name, "dog");
  // cat: tp 1 of 2 predicted, 2 true; dog: tp 1 of 2 predicted, 1 true; eel: tp 2 of 2, 3 true.
  EXPECT_DOUBLE_EQ(m.per_class[0].precision, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[0].recall, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[0].f1, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[1].precision, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[1].recall, 1.0);
  EXPECT_NEAR(m.per_class[1].f1, 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(m.per_class[2].precision, 1.0);
  EXPECT_NEAR(m.per_class[2].recall, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.per_class[2].f1, 0.8, 1e-12);
  EXPECT_EQ(m.per_class[2].support, 3);
  EXPECT_NEAR(m.macro_f1, (0.5 + 2.0 / 3.0 + 0.8) / 3.0, 1e-12);

  const auto j = m.to_json();
  EXPECT_DOUBLE_EQ(j.at("loss").get<double>(), 0.5);
  EXPECT_EQ(j.at("per_class").at(2).at("name"), "eel");
  EXPECT_EQ(j.at("count"), 6);
  EXPECT_EQ(m.summary(), "accuracy 0.6667  macro-F1 0.6556  loss 0.5000  (6 samples)");
}

TEST(EvalStats, ClassesNeverPredictedOrAbsentScoreZero) {
  EvalStats stats(4);
  // class 2 is true once but never predicted; class 3 is neither true nor predicted.
  stats.add_batch(logits_for({0, 1, 0}, 4), labels_of({0, 1, 2}), 0.0);
  const auto m = eval::compute_metrics(stats, {});
  EXPECT_EQ(m.per_class[3].name, "3");
  EXPECT_DOUBLE_EQ(m.per_class[2].precision, 0.0);
  EXPECT_DOUBLE_EQ(m.per_class[2].recall, 0.0);
  EXPECT_DOUBLE_EQ(m.per_class[2].f1, 0.0);
  EXPECT_EQ(m.per_class[2].support, 1);
  EXPECT_DOUBLE_EQ(m.per_class[3].precision, 0.0);
  EXPECT_DOUBLE_EQ(m.per_class[3].recall, 0.0);
  EXPECT_EQ(m.per_class[3].support, 0);
  // class 0: P 1/2, R 1 -> F1 2/3; class 1: 1, 1 -> 1; class 2: 0. Macro-F1 over the three
  // classes present (class 3 has no sample), and over all four as macro_f1_all.
  EXPECT_EQ(m.classes_present, 3);
  EXPECT_NEAR(m.macro_f1, (2.0 / 3.0 + 1.0) / 3.0, 1e-12);
  EXPECT_NEAR(m.macro_f1_all, (2.0 / 3.0 + 1.0) / 4.0, 1e-12);

  const auto empty = eval::compute_metrics(EvalStats(4), {});
  EXPECT_EQ(empty.count, 0);
  EXPECT_DOUBLE_EQ(empty.accuracy, 0.0);
  EXPECT_DOUBLE_EQ(empty.macro_f1, 0.0);
  EXPECT_EQ(empty.classes_present, 0);
  EXPECT_DOUBLE_EQ(empty.mean_loss, 0.0);
}

TEST(EvalStats, MergeOfSplitBatchesEqualsOnePassAndPackedSums) {
  torch::manual_seed(3);
  const std::int64_t classes = 10, n = 257;
  const auto logits = torch::randn({n, classes});
  const auto labels = torch::randint(0, classes, {n}, torch::kLong);
  const auto losses = torch::rand({n}, torch::kDouble);

  EvalStats whole(classes);
  whole.add_batch(logits, labels, losses.sum().item<double>());

  // Three "ranks" with uneven shares, merged directly and by summing packed buffers.
  const std::vector<std::int64_t> cuts{0, 100, 101, n};
  EvalStats merged(classes);
  std::vector<double> summed(EvalStats::packed_size(classes), 0.0);
  for (std::size_t r = 0; r + 1 < cuts.size(); ++r) {
    EvalStats part(classes);
    part.add_batch(logits.slice(0, cuts[r], cuts[r + 1]), labels.slice(0, cuts[r], cuts[r + 1]),
                   losses.slice(0, cuts[r], cuts[r + 1]).sum().item<double>());
    merged.merge(part);
    const auto packed = part.pack();
    for (std::size_t i = 0; i < packed.size(); ++i) summed[i] += packed[i];
  }
  EXPECT_EQ(merged.count(), n);
  EXPECT_EQ(merged.confusion(), whole.confusion());
  EXPECT_NEAR(merged.loss_sum(), whole.loss_sum(), 1e-9);
  const auto reduced = EvalStats::unpack(summed, classes);
  EXPECT_EQ(reduced.confusion(), whole.confusion());
  EXPECT_EQ(reduced.count(), n);

  // The confusion matrix agrees with argmax computed here.
  const auto pred = logits.argmax(1);
  std::int64_t correct = (pred == labels).sum().item<std::int64_t>();
  std::int64_t diagonal = 0;
  for (std::int64_t k = 0; k < classes; ++k) diagonal += whole.at(k, k);
  EXPECT_EQ(diagonal, correct);
  EXPECT_THROW(merged.merge(EvalStats(3)), Error);
}

TEST(EvalStats, PackRoundTripAndSizeBound) {
  EvalStats stats(3);
  stats.add_batch(logits_for({0, 1, 1, 2, 0, 2}, 3), labels_of({0, 0, 1, 2, 2, 2}), 1.25);
  const auto packed = stats.pack();
  ASSERT_EQ(packed.size(), 2u + 9u);
  EXPECT_DOUBLE_EQ(packed[0], 1.25);
  EXPECT_DOUBLE_EQ(packed[1], 6.0);
  const auto back = EvalStats::unpack(packed, 3);
  EXPECT_EQ(back.confusion(), stats.confusion());
  EXPECT_EQ(back.count(), 6);
  EXPECT_DOUBLE_EQ(back.loss_sum(), 1.25);
  for (const std::int64_t c : {2, 10, 100, 1000}) {
    EXPECT_LE(EvalStats::packed_size(c) * sizeof(double), std::size_t(8 * c * c + 64));
  }

  auto bad = packed;
  bad[3] = 0.5;  // a fractional count cannot come from a sum of packed buffers
  EXPECT_THROW(EvalStats::unpack(bad, 3), Error);
  bad = packed;
  bad[1] = 7;  // count disagrees with the confusion matrix
  EXPECT_THROW(EvalStats::unpack(bad, 3), Error);
  EXPECT_THROW(EvalStats::unpack(packed, 4), Error);
}

TEST(EvalStats, BadBatchesAreDataErrors) {
  EvalStats stats(3);
  EXPECT_THROW(stats.add_batch(torch::zeros({2, 4}), labels_of({0, 1}), 0), DataError);
  EXPECT_THROW(stats.add_batch(torch::zeros({2, 3}), labels_of({0, 3}), 0), DataError);
  EXPECT_THROW(stats.add_batch(torch::zeros({2, 3}), labels_of({-1, 0}), 0), DataError);
  EXPECT_THROW(stats.add_batch(torch::zeros({2, 3}), labels_of({0}), 0), DataError);
  EXPECT_THROW(stats.add_batch(torch::zeros({2, 3}), torch::zeros({2}), 0), DataError);
  EXPECT_EQ(stats.count(), 0);  // nothing half-added
  stats.add_batch(torch::zeros({0, 3}), torch::zeros({0}, torch::kLong), 0);
  EXPECT_EQ(stats.count(), 0);
  EXPECT_THROW(eval::compute_metrics(stats, {"a", "b"}), DataError);
}

TEST(EvalStats, ConfusionIsDenseUpToAHundredClassesAndSparseBeyond) {
  EvalStats small(3);
  small.add_batch(logits_for({0, 2}, 3), labels_of({0, 1}), 0.0);
  const auto dense = eval::compute_metrics(small, {}).confusion_json();
  ASSERT_TRUE(dense.is_array());
  EXPECT_EQ(dense, nlohmann::json::parse("[[1,0,0],[0,0,1],[0,0,0]]"));

  // 4,000 classes: 16 million cells, of which the two non-zero ones are written.
  EvalStats large(4000);
  large.add_batch(logits_for({5, 3999, 5}, 4000), labels_of({5, 7, 5}), 0.0);
  const auto sparse = eval::compute_metrics(large, {}).confusion_json();
  ASSERT_TRUE(sparse.is_object());
  EXPECT_EQ(sparse["classes"], 4000);
  EXPECT_EQ(sparse["cells"], nlohmann::json::parse("[[5,5,2],[7,3999,1]]"));
  EXPECT_LT(sparse.dump().size(), 100u);
}
