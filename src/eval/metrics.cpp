#include "slimtrain/eval/metrics.hpp"

#include <torch/torch.h>

#include <cmath>
#include <cstdio>

#include "slimtrain/core/error.hpp"

namespace slimtrain::eval {
namespace {

double ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

// A count that went through a float64 sum-reduction: must be a non-negative exact integer.
std::int64_t exact_count(double v, const char* what) {
  constexpr double kMaxExact = 9007199254740992.0;  // 2^53
  if (!(v >= 0 && v <= kMaxExact) || std::floor(v) != v) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: ", what, " ", v,
                    " is not an exact non-negative count");
  }
  return static_cast<std::int64_t>(v);
}

}  // namespace

EvalStats::EvalStats(std::int64_t num_classes)
    : num_classes_(num_classes),
      confusion_(static_cast<std::size_t>(num_classes > 0 ? num_classes * num_classes : 0), 0) {
  if (num_classes < 1) {
    SLIMTRAIN_THROW(Error, "evaluation statistics need at least one class, got ", num_classes);
  }
}

std::size_t EvalStats::packed_size(std::int64_t num_classes) {
  return 2 + static_cast<std::size_t>(num_classes * num_classes);
}

void EvalStats::add_batch(const at::Tensor& logits, const at::Tensor& labels, double loss_sum) {
  const auto c = num_classes_;
  if (logits.dim() != 2 || logits.size(1) != c) {
    SLIMTRAIN_THROW(DataError, "evaluation: logits of shape ", logits.sizes(), " for ", c,
                    " classes (expected [B,", c, "])");
  }
  if (labels.dim() != 1 || labels.size(0) != logits.size(0) ||
      at::isFloatingType(labels.scalar_type())) {
    SLIMTRAIN_THROW(DataError, "evaluation: labels must be integers of shape [", logits.size(0),
                    "], got ", labels.scalar_type(), " ", labels.sizes());
  }
  const auto batch = logits.size(0);
  if (batch == 0) {
    loss_sum_ += loss_sum;
    return;
  }
  const auto y = labels.to(torch::kCPU, torch::kLong);
  const auto lo = y.min().item<std::int64_t>(), hi = y.max().item<std::int64_t>();
  if (lo < 0 || hi >= c) {
    SLIMTRAIN_THROW(DataError, "evaluation: label ", (lo < 0 ? lo : hi), " is outside [0, ", c,
                    ")");
  }
  const auto predicted = logits.argmax(1).to(torch::kCPU, torch::kLong);
  const auto cells = torch::bincount(y * c + predicted, /*weights=*/{}, c * c);
  const auto* counts = cells.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < c * c; ++i) confusion_[static_cast<std::size_t>(i)] += counts[i];
  count_ += batch;
  loss_sum_ += loss_sum;
}

std::vector<double> EvalStats::pack() const {
  std::vector<double> packed;
  packed.reserve(packed_size(num_classes_));
  packed.push_back(loss_sum_);
  packed.push_back(static_cast<double>(count_));
  for (const auto v : confusion_) packed.push_back(static_cast<double>(v));
  return packed;
}

EvalStats EvalStats::unpack(const std::vector<double>& packed, std::int64_t num_classes) {
  EvalStats stats(num_classes);
  if (packed.size() != packed_size(num_classes)) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: ", packed.size(), " values for ", num_classes,
                    " classes (expected ", packed_size(num_classes), ")");
  }
  stats.loss_sum_ = packed[0];
  stats.count_ = exact_count(packed[1], "sample count");
  std::int64_t total = 0;
  for (std::size_t i = 0; i < stats.confusion_.size(); ++i) {
    stats.confusion_[i] = exact_count(packed[i + 2], "confusion entry");
    total += stats.confusion_[i];
  }
  if (total != stats.count_) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: confusion matrix holds ", total,
                    " samples but the count is ", stats.count_);
  }
  return stats;
}

void EvalStats::merge(const EvalStats& other) {
  if (other.num_classes_ != num_classes_) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: cannot merge ", other.num_classes_,
                    " classes into ", num_classes_);
  }
  count_ += other.count_;
  loss_sum_ += other.loss_sum_;
  for (std::size_t i = 0; i < confusion_.size(); ++i) confusion_[i] += other.confusion_[i];
}

nlohmann::json Metrics::to_json() const {
  auto classes = nlohmann::json::array();
  for (const auto& m : per_class) {
    classes.push_back({{"name", m.name},
                       {"precision", m.precision},
                       {"recall", m.recall},
                       {"f1", m.f1},
                       {"support", m.support}});
  }
  return {{"count", count},
          {"accuracy", accuracy},
          {"macro_f1", macro_f1},
          {"macro_f1_all", macro_f1_all},
          {"classes_present", classes_present},
          {"loss", mean_loss},
          {"per_class", classes}};
}

nlohmann::json Metrics::confusion_json() const {
  const auto c = static_cast<std::size_t>(per_class.size());
  if (c == 0 || confusion.size() < c * c) return nlohmann::json::array();
  if (c > kDenseConfusionClasses) {
    // C^2 cells are 16 million for 4,000 classes, most of them 0: only the non-zero ones,
    // which are at most the number of samples.
    auto cells = nlohmann::json::array();
    for (std::size_t i = 0; i < c * c; ++i)
      if (confusion[i] != 0) cells.push_back({i / c, i % c, confusion[i]});
    return {{"classes", c}, {"cells", std::move(cells)}};
  }
  auto rows = nlohmann::json::array();
  for (std::size_t k = 0; k < c; ++k)
    rows.push_back(
        std::vector<std::int64_t>(confusion.begin() + static_cast<std::ptrdiff_t>(k * c),
                                  confusion.begin() + static_cast<std::ptrdiff_t>((k + 1) * c)));
  return rows;
}

std::string Metrics::summary() const {
  char line[160];
  std::snprintf(line, sizeof line, "accuracy %.4f  macro-F1 %.4f  loss %.4f  (%lld samples)",
                accuracy, macro_f1, mean_loss, static_cast<long long>(count));
  return line;
}

Metrics compute_metrics(const EvalStats& stats, const std::vector<std::string>& class_names) {
  const auto c = stats.num_classes();
  if (!class_names.empty() && static_cast<std::int64_t>(class_names.size()) != c) {
    SLIMTRAIN_THROW(DataError, "evaluation: ", class_names.size(), " class names for ", c,
                    " classes");
  }
  Metrics m;
  m.count = stats.count();
  m.mean_loss = ratio(stats.loss_sum(), static_cast<double>(m.count));
  std::int64_t correct = 0;
  double f1_sum = 0, f1_present_sum = 0;
  for (std::int64_t k = 0; k < c; ++k) {
    std::int64_t support = 0, predicted = 0;
    for (std::int64_t j = 0; j < c; ++j) {
      support += stats.at(k, j);
      predicted += stats.at(j, k);
    }
    const auto tp = stats.at(k, k);
    correct += tp;
    ClassMetrics cm;
    cm.name = class_names.empty() ? std::to_string(k) : class_names[static_cast<std::size_t>(k)];
    cm.support = support;
    cm.precision = ratio(double(tp), double(predicted));
    cm.recall = ratio(double(tp), double(support));
    cm.f1 = ratio(2 * cm.precision * cm.recall, cm.precision + cm.recall);
    f1_sum += cm.f1;
    if (support > 0) {
      f1_present_sum += cm.f1;
      ++m.classes_present;
    }
    m.per_class.push_back(std::move(cm));
  }
  m.accuracy = ratio(double(correct), double(m.count));
  m.macro_f1_all = ratio(f1_sum, double(c));
  m.macro_f1 = ratio(f1_present_sum, double(m.classes_present));
  m.confusion = stats.confusion();
  return m;
}

}  // namespace slimtrain::eval
