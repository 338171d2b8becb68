#pragma once
/**
 * @brief Evaluation as sufficient statistics, linear in the classes: the loss sum, the sample
 * count and, per class, its true positives, its predictions and its samples (3C + 2 numbers), from
 * which accuracy and every class's precision, recall and F1 follow. Means are over samples and a
 * distributed evaluation is a plain sum of these, so nothing per sample (and nothing of the
 * model's hidden size) is ever communicated.
 *
 * The C x C confusion matrix is kept only up to `confusion_max_classes` classes (100 by default:
 * 10,000 cells). Above, each rank keeps the (true, predicted) pairs of the misclassified samples
 * among the first kConfusionSampleSize of its share, a bounded sample, and offers its
 * kRankTopConfusions most frequent ones; the evaluation reports the most frequent of those.
 *
 * Only add_batch touches LibTorch; this header does not include it.
 */
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace at {
class Tensor;
}

namespace slimtrain::eval {

/** @brief Classes up to which the whole confusion matrix is kept (--confusion-max-classes). */
inline constexpr std::int64_t kDefaultConfusionMaxClasses = 100;
/** @brief The largest --confusion-max-classes: 4,096^2 cells are 128 MiB as float64. */
inline constexpr std::int64_t kMaxConfusionMaxClasses = 4096;
/** @brief Samples of a rank's share whose confusions are sampled above the limit. */
inline constexpr std::int64_t kConfusionSampleSize = std::int64_t{1} << 20;
/** @brief The most frequent confusions each rank offers above the limit. */
inline constexpr std::size_t kRankTopConfusions = 64;
/** @brief The most frequent confusions an evaluation reports above the limit. */
inline constexpr std::size_t kTopConfusions = 20;

/** @brief Samples of class `true_class` predicted as `predicted` (never equal). */
struct Confusion {
  std::int64_t true_class = 0, predicted = 0, count = 0;
  bool operator==(const Confusion& o) const {
    return true_class == o.true_class && predicted == o.predicted && count == o.count;
  }
};

/** @brief An evaluation's (or one rank's share's) statistics. */
class EvalStats {
 public:
  explicit EvalStats(std::int64_t num_classes,
                     std::int64_t confusion_max_classes = kDefaultConfusionMaxClasses);

  /**
   * @brief Adds a batch: logits [B, C] (any floating type, any device), labels [B] integer in
   * [0, C), loss_sum = the loss summed over the B samples. DataError on shape or label problems
   * (and then nothing is added).
   */
  void add_batch(const at::Tensor& logits, const at::Tensor& labels, double loss_sum);
  /** @brief Adds n samples' labels and predictions, both in [0, C) (DataError otherwise). */
  void add_predictions(const std::int64_t* labels, const std::int64_t* predicted, std::int64_t n,
                       double loss_sum);
  /**
   * @brief Above the limit: samples coded true * C + predicted (a device pass reads them back at
   * its end), counted as add_batch's sample counts them; the counts themselves come from pack's
   * layout. Ignored while the whole matrix is kept.
   */
  void sample_confusions(const std::int64_t* codes, std::int64_t n);

  /**
   * @brief The counts as one float64 buffer [loss_sum, count, true positives C, predicted C,
   * actual C, then the C x C matrix row-major when it is kept]. Integers are exact in float64 up
   * to 2^53, so a sum-reduction of packed buffers is exact for the counts. The sampled
   * confusions are not in it (top_confusions and merge_top carry them).
   */
  std::vector<double> pack() const;
  /** @brief Inverse of pack(); Error when the size or a count is not what pack() makes. */
  static EvalStats unpack(const std::vector<double>& packed, std::int64_t num_classes,
                          std::int64_t confusion_max_classes = kDefaultConfusionMaxClasses);
  /** @brief Number of doubles pack() returns for C classes: 3C + 2, plus C^2 when kept. */
  static std::size_t packed_size(std::int64_t num_classes,
                                 std::int64_t confusion_max_classes = kDefaultConfusionMaxClasses);

  std::int64_t num_classes() const { return num_classes_; }
  /** @brief Whether the whole confusion matrix is kept (C <= confusion_max_classes). */
  bool keeps_matrix() const { return !confusion_.empty(); }
  std::int64_t confusion_max_classes() const { return confusion_max_; }
  std::int64_t count() const { return count_; }
  double loss_sum() const { return loss_sum_; }
  const std::vector<std::int64_t>& true_positives() const { return tp_; }
  const std::vector<std::int64_t>& predicted() const { return predicted_; }
  /** @brief Samples per true class (the support). */
  const std::vector<std::int64_t>& actual() const { return actual_; }
  /** @brief [true][pred], row-major, C*C entries when kept; empty above the limit. */
  const std::vector<std::int64_t>& confusion() const { return confusion_; }
  /** @brief One cell of the kept matrix (Error above the limit). */
  std::int64_t at(std::int64_t true_class, std::int64_t predicted) const;

  /**
   * @brief The `k` most frequent confusions, most frequent first (ties: by true class, then
   * predicted): exact from the matrix when it is kept, else from this rank's sample.
   */
  std::vector<Confusion> top_confusions(std::size_t k) const;
  /** @brief Samples whose confusions were sampled (above the limit), and how many were wrong. */
  std::int64_t sampled() const { return sampled_; }
  std::int64_t sampled_wrong() const { return sampled_wrong_; }

  /** @brief Adds another rank's or batch's statistics; Error when the shapes differ. */
  void merge(const EvalStats& other);

 private:
  void check_labels(const std::int64_t* labels, const std::int64_t* predicted,
                    std::int64_t n) const;
  std::int64_t num_classes_;
  std::int64_t confusion_max_;
  std::int64_t count_ = 0;
  double loss_sum_ = 0.0;
  std::vector<std::int64_t> tp_, predicted_, actual_;
  std::vector<std::int64_t> confusion_;
  std::unordered_map<std::int64_t, std::int64_t> sample_;  ///< true * C + predicted -> count
  std::int64_t sampled_ = 0, sampled_wrong_ = 0;
};

/**
 * @brief Every rank's top confusions as one fixed-size record for an all-gather: [sampled,
 * sampled_wrong, then kRankTopConfusions (true, predicted, count) triples, -1 where fewer].
 */
std::vector<std::int64_t> pack_top_confusions(const EvalStats& stats);
/** @brief What the evaluation reports from the gathered records of every rank. */
struct SampledConfusions {
  std::vector<Confusion> top;  ///< the kTopConfusions most frequent, summed over ranks
  std::int64_t sampled = 0;    ///< samples looked at, all ranks
  std::int64_t wrong = 0;      ///< of which misclassified
};
SampledConfusions merge_top_confusions(const std::vector<std::int64_t>& gathered);

}  // namespace slimtrain::eval
