#include "slimtrain/eval/eval_stats.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "slimtrain/core/error.hpp"

namespace slimtrain::eval {
namespace {

// A count that went through a float64 sum-reduction: must be a non-negative exact integer.
std::int64_t exact_count(double v, const char* what) {
  constexpr double kMaxExact = 9007199254740992.0;  // 2^53
  if (!(v >= 0 && v <= kMaxExact) || std::floor(v) != v) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: ", what, " ", v,
                    " is not an exact non-negative count");
  }
  return static_cast<std::int64_t>(v);
}

bool more_frequent(const Confusion& a, const Confusion& b) {
  if (a.count != b.count) return a.count > b.count;
  if (a.true_class != b.true_class) return a.true_class < b.true_class;
  return a.predicted < b.predicted;
}

std::vector<Confusion> most_frequent(std::vector<Confusion> all, std::size_t k) {
  const std::size_t n = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                    more_frequent);
  all.resize(n);
  return all;
}

std::int64_t sum_of(const std::vector<std::int64_t>& v) {
  std::int64_t total = 0;
  for (const std::int64_t x : v) total += x;
  return total;
}

}  // namespace

EvalStats::EvalStats(std::int64_t num_classes, std::int64_t confusion_max_classes)
    : num_classes_(num_classes), confusion_max_(confusion_max_classes) {
  if (num_classes < 1) {
    SLIMTRAIN_THROW(Error, "evaluation statistics need at least one class, got ", num_classes);
  }
  const auto c = static_cast<std::size_t>(num_classes);
  tp_.assign(c, 0);
  predicted_.assign(c, 0);
  actual_.assign(c, 0);
  if (num_classes <= confusion_max_classes) confusion_.assign(c * c, 0);
}

std::size_t EvalStats::packed_size(std::int64_t num_classes, std::int64_t confusion_max_classes) {
  const auto c = static_cast<std::size_t>(num_classes);
  return 2 + 3 * c + (num_classes <= confusion_max_classes ? c * c : 0);
}

std::int64_t EvalStats::at(std::int64_t true_class, std::int64_t predicted) const {
  if (!keeps_matrix())
    SLIMTRAIN_THROW(Error, "evaluation statistics: the confusion matrix of ", num_classes_,
                    " classes is not kept (--confusion-max-classes ", confusion_max_, ")");
  return confusion_[static_cast<std::size_t>(true_class * num_classes_ + predicted)];
}

void EvalStats::check_labels(const std::int64_t* labels, const std::int64_t* predicted,
                             std::int64_t n) const {
  for (std::int64_t i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] >= num_classes_)
      SLIMTRAIN_THROW(DataError, "evaluation: label ", labels[i], " is outside [0, ", num_classes_,
                      ")");
    if (predicted[i] < 0 || predicted[i] >= num_classes_)
      SLIMTRAIN_THROW(Error, "evaluation: prediction ", predicted[i], " is outside [0, ",
                      num_classes_, ")");
  }
}

void EvalStats::add_predictions(const std::int64_t* labels, const std::int64_t* predicted,
                                std::int64_t n, double loss_sum) {
  check_labels(labels, predicted, n);  // before anything is added
  const std::int64_t c = num_classes_;
  const std::int64_t room = std::max<std::int64_t>(0, kConfusionSampleSize - sampled_);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto y = static_cast<std::size_t>(labels[i]);
    const auto p = static_cast<std::size_t>(predicted[i]);
    ++actual_[y];
    ++predicted_[p];
    if (y == p) ++tp_[y];
    if (keeps_matrix()) {
      ++confusion_[y * static_cast<std::size_t>(c) + p];
    } else if (i < room) {
      ++sampled_;
      if (y != p) {
        ++sampled_wrong_;
        ++sample_[labels[i] * c + predicted[i]];
      }
    }
  }
  count_ += n;
  loss_sum_ += loss_sum;
}

void EvalStats::sample_confusions(const std::int64_t* codes, std::int64_t n) {
  if (keeps_matrix()) return;
  const std::int64_t c = num_classes_;
  n = std::min(n, std::max<std::int64_t>(0, kConfusionSampleSize - sampled_));
  for (std::int64_t i = 0; i < n; ++i) {
    if (codes[i] < 0 || codes[i] >= c * c)
      SLIMTRAIN_THROW(Error, "evaluation: sampled confusion ", codes[i], " is outside [0, C^2)");
    ++sampled_;
    if (codes[i] / c != codes[i] % c) {
      ++sampled_wrong_;
      ++sample_[codes[i]];
    }
  }
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
  const auto y = labels.to(torch::kCPU, torch::kLong).contiguous();
  const auto predicted = logits.argmax(1).to(torch::kCPU, torch::kLong).contiguous();
  add_predictions(y.data_ptr<std::int64_t>(), predicted.data_ptr<std::int64_t>(), y.size(0),
                  loss_sum);
}

std::vector<double> EvalStats::pack() const {
  std::vector<double> packed;
  packed.reserve(packed_size(num_classes_, confusion_max_));
  packed.push_back(loss_sum_);
  packed.push_back(static_cast<double>(count_));
  for (const auto* part : {&tp_, &predicted_, &actual_, &confusion_})
    for (const auto v : *part) packed.push_back(static_cast<double>(v));
  return packed;
}

EvalStats EvalStats::unpack(const std::vector<double>& packed, std::int64_t num_classes,
                            std::int64_t confusion_max_classes) {
  EvalStats stats(num_classes, confusion_max_classes);
  if (packed.size() != packed_size(num_classes, confusion_max_classes)) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: ", packed.size(), " values for ", num_classes,
                    " classes (expected ", packed_size(num_classes, confusion_max_classes), ")");
  }
  stats.loss_sum_ = packed[0];
  stats.count_ = exact_count(packed[1], "sample count");
  std::size_t at = 2;
  for (auto* part : {&stats.tp_, &stats.predicted_, &stats.actual_, &stats.confusion_})
    for (auto& v : *part) v = exact_count(packed[at++], "class count");
  if (sum_of(stats.actual_) != stats.count_ || sum_of(stats.predicted_) != stats.count_ ||
      (stats.keeps_matrix() && sum_of(stats.confusion_) != stats.count_))
    SLIMTRAIN_THROW(Error, "evaluation statistics: the classes hold ", sum_of(stats.actual_),
                    " samples and ", sum_of(stats.predicted_), " predictions but the count is ",
                    stats.count_);
  for (std::size_t k = 0; k < stats.tp_.size(); ++k)
    if (stats.tp_[k] > std::min(stats.actual_[k], stats.predicted_[k]))
      SLIMTRAIN_THROW(Error, "evaluation statistics: class ", k, " has ", stats.tp_[k],
                      " true positives of ", stats.actual_[k], " samples");
  return stats;
}

std::vector<Confusion> EvalStats::top_confusions(std::size_t k) const {
  std::vector<Confusion> all;
  const std::int64_t c = num_classes_;
  if (keeps_matrix()) {
    for (std::int64_t i = 0; i < c * c; ++i)
      if (i / c != i % c && confusion_[static_cast<std::size_t>(i)] > 0)
        all.push_back({i / c, i % c, confusion_[static_cast<std::size_t>(i)]});
  } else {
    for (const auto& [code, n] : sample_) all.push_back({code / c, code % c, n});
  }
  return most_frequent(std::move(all), k);
}

void EvalStats::merge(const EvalStats& other) {
  if (other.num_classes_ != num_classes_ || other.keeps_matrix() != keeps_matrix()) {
    SLIMTRAIN_THROW(Error, "evaluation statistics: cannot merge ", other.num_classes_,
                    " classes into ", num_classes_);
  }
  count_ += other.count_;
  loss_sum_ += other.loss_sum_;
  for (std::size_t i = 0; i < tp_.size(); ++i) {
    tp_[i] += other.tp_[i];
    predicted_[i] += other.predicted_[i];
    actual_[i] += other.actual_[i];
  }
  for (std::size_t i = 0; i < confusion_.size(); ++i) confusion_[i] += other.confusion_[i];
  for (const auto& [code, n] : other.sample_) sample_[code] += n;
  sampled_ += other.sampled_;
  sampled_wrong_ += other.sampled_wrong_;
}

std::vector<std::int64_t> pack_top_confusions(const EvalStats& stats) {
  std::vector<std::int64_t> record(2 + 3 * kRankTopConfusions, -1);
  record[0] = stats.sampled();
  record[1] = stats.sampled_wrong();
  std::size_t at = 2;
  for (const Confusion& c : stats.top_confusions(kRankTopConfusions)) {
    record[at++] = c.true_class;
    record[at++] = c.predicted;
    record[at++] = c.count;
  }
  return record;
}

SampledConfusions merge_top_confusions(const std::vector<std::int64_t>& gathered) {
  const std::size_t width = 2 + 3 * kRankTopConfusions;
  if (gathered.size() % width != 0)
    SLIMTRAIN_THROW(Error, "evaluation: ", gathered.size(),
                    " gathered confusion values are no whole number of records of ", width);
  SampledConfusions out;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> summed;
  for (std::size_t r = 0; r < gathered.size(); r += width) {
    out.sampled += gathered[r];
    out.wrong += gathered[r + 1];
    for (std::size_t i = r + 2; i + 2 < r + width && gathered[i] >= 0; i += 3)
      summed[{gathered[i], gathered[i + 1]}] += gathered[i + 2];
  }
  std::vector<Confusion> all;
  for (const auto& [cell, n] : summed) all.push_back({cell.first, cell.second, n});
  out.top = most_frequent(std::move(all), kTopConfusions);
  return out;
}

}  // namespace slimtrain::eval
