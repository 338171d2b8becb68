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
  ASSERT_EQ(packed.size(), 2u + 3u * 3u + 9u);  // per class tp, predicted, actual; the matrix
  EXPECT_DOUBLE_EQ(packed[0], 1.25);
  EXPECT_DOUBLE_EQ(packed[1], 6.0);
  const auto back = EvalStats::unpack(packed, 3);
  EXPECT_EQ(back.confusion(), stats.confusion());
  EXPECT_EQ(back.true_positives(), stats.true_positives());
  EXPECT_EQ(back.count(), 6);
  EXPECT_DOUBLE_EQ(back.loss_sum(), 1.25);
  // Linear in the classes above the confusion limit (100 by default): 3C + 2 numbers.
  for (const std::int64_t c : {101, 1000, 20000, 100000})
    EXPECT_EQ(EvalStats::packed_size(c), static_cast<std::size_t>(3 * c + 2)) << c;
  EXPECT_EQ(EvalStats::packed_size(100), 2u + 300u + 10000u);
  EXPECT_EQ(EvalStats::packed_size(100, 10), 302u);

  auto bad = packed;
  bad[3] = 0.5;  // a fractional count cannot come from a sum of packed buffers
  EXPECT_THROW(EvalStats::unpack(bad, 3), Error);
  bad = packed;
  bad[1] = 7;  // count disagrees with the classes
  EXPECT_THROW(EvalStats::unpack(bad, 3), Error);
  bad = packed;
  bad[2] = 3;  // class 0: 3 true positives of its 2 samples
  EXPECT_THROW(EvalStats::unpack(bad, 3), Error);
  EXPECT_THROW(EvalStats::unpack(packed, 4), Error);
}

// Issue 60: 20,000 classes took a 3.2 GB matrix per rank (and its reduction); the statistics
// are now 60,002 numbers, the per-class scores the same as from the whole matrix.
TEST(EvalStats, ManyClassesAreLinearAndScoreAsTheWholeMatrixDoes) {
  EvalStats many(20000);
  EXPECT_FALSE(many.keeps_matrix());
  EXPECT_TRUE(many.confusion().empty());
  EXPECT_EQ(many.pack().size(), 60002u);
  EXPECT_THROW(many.at(0, 0), Error);

  // Above the limit and with the whole matrix kept, the same samples score the same.
  torch::manual_seed(7);
  const std::int64_t classes = 1500, n = 3000;
  // Logits that mostly agree with the labels, so that classes have true positives.
  const auto labels = torch::randint(0, 300, {n}, torch::kLong) * 7 % classes;
  auto logits = torch::randn({n, classes});
  logits.index_put_({torch::arange(n), labels}, 3.0);
  EvalStats stats(classes), whole(classes, classes);
  stats.add_batch(logits, labels, 2.0);
  whole.add_batch(logits, labels, 2.0);
  EXPECT_EQ(stats.pack().size(), static_cast<std::size_t>(3 * classes + 2));
  const auto sparse = eval::compute_metrics(stats, {});
  const auto dense = eval::compute_metrics(whole, {});
  EXPECT_EQ(sparse.accuracy, dense.accuracy);
  EXPECT_EQ(sparse.macro_f1, dense.macro_f1);
  for (std::size_t k = 0; k < static_cast<std::size_t>(classes); ++k) {
    ASSERT_EQ(sparse.per_class[k].f1, dense.per_class[k].f1) << k;
    ASSERT_EQ(sparse.per_class[k].support, dense.per_class[k].support) << k;
    ASSERT_EQ(sparse.per_class[k].predicted, dense.per_class[k].predicted) << k;
  }
  // Every sample sampled (fewer than the bound): the top confusions are the matrix's own.
  EXPECT_EQ(stats.sampled(), n);
  EXPECT_EQ(stats.sampled_wrong(), (logits.argmax(1) != labels).sum().item<std::int64_t>());
  EXPECT_EQ(stats.top_confusions(eval::kTopConfusions), whole.top_confusions(eval::kTopConfusions));
}

TEST(EvalStats, TopConfusionsOfSeveralRanksAreSummedAndSaidToBeSampled) {
  const std::int64_t classes = 500;
  // Rank 0: 3 -> 4 five times, 7 -> 8 once; rank 1: 3 -> 4 twice, 9 -> 1 three times.
  EvalStats r0(classes), r1(classes);
  std::vector<std::int64_t> y0{3, 3, 3, 3, 3, 7, 2}, p0{4, 4, 4, 4, 4, 8, 2};
  std::vector<std::int64_t> y1{3, 3, 9, 9, 9}, p1{4, 4, 1, 1, 1};
  r0.add_predictions(y0.data(), p0.data(), 7, 0.0);
  r1.add_predictions(y1.data(), p1.data(), 5, 0.0);
  std::vector<std::int64_t> gathered = eval::pack_top_confusions(r0);
  const std::vector<std::int64_t> theirs = eval::pack_top_confusions(r1);
  gathered.insert(gathered.end(), theirs.begin(), theirs.end());
  const eval::SampledConfusions merged = eval::merge_top_confusions(gathered);
  EXPECT_EQ(merged.sampled, 12);
  EXPECT_EQ(merged.wrong, 11);
  ASSERT_EQ(merged.top.size(), 3u);
  EXPECT_EQ(merged.top[0], (eval::Confusion{3, 4, 7}));
  EXPECT_EQ(merged.top[1], (eval::Confusion{9, 1, 3}));
  EXPECT_EQ(merged.top[2], (eval::Confusion{7, 8, 1}));

  EvalStats all(classes);
  all.merge(r0);
  all.merge(r1);
  const auto m = eval::compute_metrics(all, {}, &merged);
  const auto j = m.confusion_json();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["classes"], classes);
  EXPECT_EQ(j["top"], nlohmann::json::parse("[[3,4,7],[9,1,3],[7,8,1]]"));
  EXPECT_EQ(j["sampled"], 12);
  EXPECT_NE(j["note"].get<std::string>().find("--confusion-max-classes 100"), std::string::npos);
  EXPECT_LT(j.dump().size(), 600u);

  // The sample is bounded: codes past it are not looked at.
  EvalStats bounded(classes);
  std::vector<std::int64_t> codes(static_cast<std::size_t>(eval::kConfusionSampleSize) + 10,
                                  3 * classes + 4);
  bounded.sample_confusions(codes.data(), static_cast<std::int64_t>(codes.size()));
  EXPECT_EQ(bounded.sampled(), eval::kConfusionSampleSize);
  EXPECT_EQ(bounded.top_confusions(1).front().count, eval::kConfusionSampleSize);
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

TEST(EvalStats, ConfusionIsDenseUpToAHundredClassesCellsToTheLimitAndSampledBeyond) {
  EvalStats small(3);
  small.add_batch(logits_for({0, 2}, 3), labels_of({0, 1}), 0.0);
  const auto dense = eval::compute_metrics(small, {}).confusion_json();
  ASSERT_TRUE(dense.is_array());
  EXPECT_EQ(dense, nlohmann::json::parse("[[1,0,0],[0,0,1],[0,0,0]]"));

  // 4,000 classes with the matrix kept (--confusion-max-classes 4096): its non-zero cells.
  EvalStats kept(4000, 4096);
  kept.add_batch(logits_for({5, 3999, 5}, 4000), labels_of({5, 7, 5}), 0.0);
  const auto cells = eval::compute_metrics(kept, {}).confusion_json();
  ASSERT_TRUE(cells.is_object());
  EXPECT_EQ(cells["classes"], 4000);
  EXPECT_EQ(cells["cells"], nlohmann::json::parse("[[5,5,2],[7,3999,1]]"));
  EXPECT_LT(cells.dump().size(), 100u);

  // By default (100): the most frequent confusions, from the sample.
  EvalStats large(4000);
  large.add_batch(logits_for({5, 3999, 5}, 4000), labels_of({5, 7, 5}), 0.0);
  const auto top = eval::compute_metrics(large, {}).confusion_json();
  EXPECT_EQ(top["top"], nlohmann::json::parse("[[7,3999,1]]"));
  EXPECT_EQ(top["sampled_wrong"], 1);
}
