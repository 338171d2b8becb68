#pragma once
/**
 * @brief --best-metric over a run: which evaluation was best so far (resumes included, through
 * the checkpoint's meta), and what the checkpoint of an evaluated step records. Retention keeps
 * the best checkpoint by the metric a checkpoint carries, and a checkpoint carries it only when it
 * holds the weights that evaluation saw.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "slimtrain/ckpt/retention.hpp"
#include "slimtrain/eval/metrics.hpp"
#include "slimtrain/train/config.hpp"

namespace slimtrain::train {

/** @brief --best-metric, or "accuracy" when it is not set. */
std::string best_metric_name(const TrainConfig& cfg);

/** @brief The number --best-metric names in `m`. */
double metric_value(const eval::Metrics& m, const std::string& name);

/** @brief The best value of --best-metric `metric` a checkpoint's meta records, if any. */
std::optional<double> best_so_far(const nlohmann::json& meta, const std::string& metric);

/** @brief What retention keeps: --keep-last, and the best checkpoint by --best-metric. */
ckpt::RetentionPolicy retention(const TrainConfig& cfg);

class BestEvaluation {
 public:
  /** @brief `best`: the best value so far (from the checkpoint resumed from), if any. */
  BestEvaluation(const TrainConfig& cfg, std::optional<double> best)
      : cfg_(cfg), best_(best), higher_is_better_(retention(cfg).higher_is_better) {}

  /**
   * @brief Remembers the evaluation at `step`. True when it is a new best, --best-metric is set
   * and checkpoints are written during training: the caller then checkpoints this step.
   */
  bool note(const eval::Metrics& metrics, std::int64_t step);
  /** @brief The metric of the evaluation at `step`, when there was one (else nullopt). */
  std::optional<double> metric_at(std::int64_t step) const;
  /** @brief The evaluation's metrics at `step` for the checkpoint's meta (null when none). */
  nlohmann::json metrics_at(std::int64_t step) const;
  /** @brief Adds the run's best so far to a checkpoint's meta (nothing before any evaluation). */
  void record_in(nlohmann::json& meta) const;

 private:
  struct Evaluated {
    std::int64_t step = 0;
    double value = 0.0;      ///< of --best-metric
    nlohmann::json metrics;  ///< stored in the meta of a checkpoint of the same step
  };
  const TrainConfig& cfg_;
  std::optional<Evaluated> evaluated_;  ///< the latest evaluation
  std::optional<double> best_;          ///< the best evaluation of the run, resumes included
  bool higher_is_better_;
};

}  // namespace slimtrain::train
