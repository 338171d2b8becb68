#pragma once
/**
 * @brief Evaluation as sufficient statistics: loss sum, sample count and a C x C confusion
 * matrix. Means are over samples and a distributed evaluation is a plain sum of these, so
 * nothing per-sample (and nothing of the model's hidden size) is ever communicated.
 *
 * Only add_batch touches LibTorch; this header does not include it.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace slimtrain::eval {

/** @brief Loss sum, sample count and confusion matrix of an evaluation (or of one rank's share). */
class EvalStats {
 public:
  explicit EvalStats(std::int64_t num_classes);

  /**
   * @brief Adds a batch: logits [B, C] (any floating type, any device), labels [B] integer in
   * [0, C), loss_sum = the loss summed over the B samples. DataError on shape or label problems.
   */
  void add_batch(const at::Tensor& logits, const at::Tensor& labels, double loss_sum);

  /**
   * @brief The whole state as one float64 buffer [loss_sum, count, confusion row-major C*C].
   * Integers are exact in float64 up to 2^53, so a sum-reduction of packed buffers is exact for
   * the counts. Size 2 + C*C, i.e. 8*C^2 + 16 bytes.
   */
  std::vector<double> pack() const;
  /** @brief Inverse of pack(); Error when the size or a count is not what pack() makes. */
  static EvalStats unpack(const std::vector<double>& packed, std::int64_t num_classes);
  /** @brief Number of doubles pack() returns for C classes. */
  static std::size_t packed_size(std::int64_t num_classes);

  std::int64_t num_classes() const { return num_classes_; }
  std::int64_t count() const { return count_; }
  double loss_sum() const { return loss_sum_; }
  /** @brief [true][pred], row-major, C*C entries. */
  const std::vector<std::int64_t>& confusion() const { return confusion_; }
  std::int64_t at(std::int64_t true_class, std::int64_t predicted) const {
    return confusion_[static_cast<std::size_t>(true_class * num_classes_ + predicted)];
  }

  /** @brief Adds another rank's or batch's statistics; Error when the class counts differ. */
  void merge(const EvalStats& other);

 private:
  std::int64_t num_classes_;
  std::int64_t count_ = 0;
  double loss_sum_ = 0.0;
  std::vector<std::int64_t> confusion_;
};

/** @brief One class's scores. */
struct ClassMetrics {
  std::string name;
  double precision = 0, recall = 0, f1 = 0;
  std::int64_t support = 0;  ///< samples whose true class is this one
};

/** @brief Classes up to which the confusion matrix is written out in full. */
inline constexpr std::size_t kDenseConfusionClasses = 100;

/** @brief The metrics of an evaluation, from its statistics. */
struct Metrics {
  double accuracy = 0, mean_loss = 0;
  /** @brief Mean F1 over the classes present in the split (support > 0): a class the split
   * never holds (labels 1..4 leave class "0" empty) does not drag the figure down. */
  double macro_f1 = 0;
  /** @brief Mean F1 over all C classes, absent ones scoring 0 (sklearn's labels=all). */
  double macro_f1_all = 0;
  std::int64_t count = 0;
  std::int64_t classes_present = 0;  ///< classes with support > 0
  std::vector<ClassMetrics> per_class;
  /** @brief [true][pred] counts, row-major C*C (kept for the final evaluation's record). */
  std::vector<std::int64_t> confusion;
  /** @brief {"count", "accuracy", "macro_f1", "macro_f1_all", "classes_present", "loss",
   * "per_class": [{name, precision, recall, f1, support}]} */
  nlohmann::json to_json() const;
  /**
   * @brief The confusion matrix as C rows of C counts (row = true class, column = predicted) up
   * to kDenseConfusionClasses classes; beyond, {"classes": C, "cells": [[true, predicted,
   * count], ...]} with the non-zero cells only, so that an event stays the size of the split.
   */
  nlohmann::json confusion_json() const;
  /** @brief One line: "accuracy 0.8912  macro-F1 0.8890  loss 0.3012  (10000 samples)". */
  std::string summary() const;
};

/**
 * @brief Accuracy, macro-F1 (unweighted mean of the per-class F1 over the classes present in the
 * split, and over all C classes as macro_f1_all), per-class
 * precision/recall/F1 and the mean loss. A ratio with a zero denominator is defined as 0: a class
 * never predicted has precision 0, a class with no samples has recall 0, and F1 is 0 when
 * precision + recall is 0; with no samples at all every metric is 0. class_names may be empty
 * (names become "0".."C-1"); otherwise it must have C entries (DataError).
 */
Metrics compute_metrics(const EvalStats& stats, const std::vector<std::string>& class_names);

}  // namespace slimtrain::eval
