#pragma once
/**
 * @brief The scores of an evaluation, computed from its statistics (eval_stats.hpp: linear in the
 * classes, the confusion matrix only up to --confusion-max-classes).
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "slimtrain/eval/eval_stats.hpp"

namespace slimtrain::eval {

/** @brief One class's scores. */
struct ClassMetrics {
  std::string name;
  double precision = 0, recall = 0, f1 = 0;
  std::int64_t support = 0;    ///< samples whose true class is this one
  std::int64_t predicted = 0;  ///< samples predicted as this one
};

/** @brief Classes up to which a kept confusion matrix is written out as rows (else its cells). */
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
  /** @brief [true][pred] counts, row-major C*C, up to --confusion-max-classes; else empty. */
  std::vector<std::int64_t> confusion;
  /** @brief The --confusion-max-classes the statistics were made with. */
  std::int64_t confusion_max_classes = kDefaultConfusionMaxClasses;
  /** @brief The most frequent confusions: exact with the matrix, else from the sample. */
  std::vector<Confusion> top_confusions;
  /** @brief Above the limit: samples whose confusions were sampled, and how many were wrong. */
  std::int64_t confusion_sampled = 0, confusion_sampled_wrong = 0;
  /** @brief {"count", "accuracy", "macro_f1", "macro_f1_all", "classes_present", "loss",
   * "per_class": [{name, precision, recall, f1, support}]} */
  nlohmann::json to_json() const;
  /**
   * @brief The confusion matrix as C rows of C counts (row = true class, column = predicted) up
   * to kDenseConfusionClasses classes; beyond, {"classes": C, "cells": [[true, predicted,
   * count], ...]} with the non-zero cells only, so that an event stays the size of the split.
   * Above --confusion-max-classes: {"classes": C, "max_classes": M, "top": [[true, predicted,
   * count], ...], "sampled": n, "sampled_wrong": n, "note": how they were sampled}.
   */
  nlohmann::json confusion_json() const;
  /** @brief One line: "accuracy 0.8912  macro-F1 0.8890  loss 0.3012  (10000 samples)". */
  std::string summary() const;
};

/**
 * @brief Accuracy, macro-F1 (unweighted mean of the per-class F1 over the classes present in the
 * split, and over all C classes as macro_f1_all), per-class
 * precision/recall/F1 and the mean loss, in O(C). A ratio with a zero denominator is defined as
 * 0: a class never predicted has precision 0, a class with no samples has recall 0, and F1 is 0
 * when precision + recall is 0; with no samples at all every metric is 0. class_names may be
 * empty (names become "0".."C-1"); otherwise it must have C entries (DataError). Above the
 * confusion limit the top confusions are `sampled`'s (every rank's), else this rank's own.
 */
Metrics compute_metrics(const EvalStats& stats, const std::vector<std::string>& class_names,
                        const SampledConfusions* sampled = nullptr);

}  // namespace slimtrain::eval
