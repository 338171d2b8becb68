#include "slimtrain/train/best_evaluation.hpp"

namespace slimtrain::train {
namespace {

// The meta key of the run's best evaluation so far, kept across resumes.
constexpr const char* kBestKey = "best_evaluation";

}  // namespace

std::string best_metric_name(const TrainConfig& cfg) {
  return cfg.best_metric.empty() ? "accuracy" : cfg.best_metric;
}

double metric_value(const eval::Metrics& m, const std::string& name) {
  if (name == "macro_f1") return m.macro_f1;
  if (name == "loss") return m.mean_loss;
  return m.accuracy;
}

std::optional<double> best_so_far(const nlohmann::json& meta, const std::string& metric) {
  const auto it = meta.find(kBestKey);
  if (it == meta.end() || !it->is_object() || it->value("metric", "") != metric)
    return std::nullopt;
  const auto value = it->find("value");
  if (value == it->end() || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

ckpt::RetentionPolicy retention(const TrainConfig& cfg) {
  ckpt::RetentionPolicy policy;
  policy.keep_last = cfg.keep_last;
  policy.best_metric = best_metric_name(cfg);
  policy.higher_is_better = policy.best_metric != "loss";
  return policy;
}

bool BestEvaluation::note(const eval::Metrics& metrics, std::int64_t step) {
  const double value = metric_value(metrics, best_metric_name(cfg_));
  evaluated_ = Evaluated{step, value, metrics.to_json()};
  const bool new_best = !best_ || (higher_is_better_ ? value > *best_ : value < *best_);
  if (!new_best) return false;
  best_ = value;
  // Only when asked for by name: a checkpoint of its own costs a write a run did not plan for.
  return !cfg_.best_metric.empty() && (cfg_.checkpoint_every > 0 || cfg_.checkpoint_minutes > 0);
}

std::optional<double> BestEvaluation::metric_at(std::int64_t step) const {
  if (evaluated_ && evaluated_->step == step) return evaluated_->value;
  return std::nullopt;
}

nlohmann::json BestEvaluation::metrics_at(std::int64_t step) const {
  return evaluated_ && evaluated_->step == step ? evaluated_->metrics : nlohmann::json();
}

void BestEvaluation::record_in(nlohmann::json& meta) const {
  if (best_) meta[kBestKey] = {{"metric", best_metric_name(cfg_)}, {"value", *best_}};
}

}  // namespace slimtrain::train
