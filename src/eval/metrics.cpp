#include "slimtrain/eval/metrics.hpp"

#include <cstdio>

#include "slimtrain/core/error.hpp"

namespace slimtrain::eval {
namespace {

double ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

nlohmann::json triples(const std::vector<Confusion>& cells) {
  auto out = nlohmann::json::array();
  for (const Confusion& c : cells) out.push_back({c.true_class, c.predicted, c.count});
  return out;
}

}  // namespace

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
  if (c == 0) return nlohmann::json::array();
  if (confusion.size() < c * c) {  // above --confusion-max-classes: the sample's most frequent
    return {{"classes", c},
            {"max_classes", confusion_max_classes},
            {"top", triples(top_confusions)},
            {"sampled", confusion_sampled},
            {"sampled_wrong", confusion_sampled_wrong},
            {"note",
             detail::concat(
                 "the ", c, " x ", c, " matrix is kept up to --confusion-max-classes ",
                 confusion_max_classes, "; these are the most frequent confusions among the first ",
                 kConfusionSampleSize,
                 " samples of each rank's share (each "
                 "rank's ",
                 kRankTopConfusions, " most frequent, summed): counts are at least these")}};
  }
  if (c > kDenseConfusionClasses) {
    // C^2 cells are 16 million for 4,000 classes, most of them 0: only the non-zero ones,
    // which are at most the number of samples.
    std::vector<Confusion> cells;
    for (std::size_t i = 0; i < c * c; ++i)
      if (confusion[i] != 0)
        cells.push_back(
            {static_cast<std::int64_t>(i / c), static_cast<std::int64_t>(i % c), confusion[i]});
    return {{"classes", c}, {"cells", triples(cells)}};
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

Metrics compute_metrics(const EvalStats& stats, const std::vector<std::string>& class_names,
                        const SampledConfusions* sampled) {
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
  m.per_class.reserve(static_cast<std::size_t>(c));
  for (std::size_t k = 0; k < static_cast<std::size_t>(c); ++k) {
    const std::int64_t tp = stats.true_positives()[k], support = stats.actual()[k];
    correct += tp;
    ClassMetrics cm;
    cm.name = class_names.empty() ? std::to_string(k) : class_names[k];
    cm.support = support;
    cm.predicted = stats.predicted()[k];
    cm.precision = ratio(double(tp), double(stats.predicted()[k]));
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
  m.confusion_max_classes = stats.confusion_max_classes();
  if (stats.keeps_matrix() || sampled == nullptr) {
    m.top_confusions = stats.top_confusions(kTopConfusions);
    m.confusion_sampled = stats.sampled();
    m.confusion_sampled_wrong = stats.sampled_wrong();
  } else {
    m.top_confusions = sampled->top;
    m.confusion_sampled = sampled->sampled;
    m.confusion_sampled_wrong = sampled->wrong;
  }
  return m;
}

}  // namespace slimtrain::eval
