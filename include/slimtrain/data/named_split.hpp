#pragma once
/**
 * @brief One split of a layout-2 file (named inputs) read whole into memory, checked row by row
 * (offsets that decrease or miss the end of their values, token ids outside [0, vocab_size),
 * labels outside [0, C): DataError naming file, dataset and row), and cut into named batches: a
 * ragged input is padded to the longest sequence of the batch, rounded up to a multiple of 8 (cut
 * at max_length), with its pad_id, and its mask (1 for real tokens) follows it.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/batch_memory.hpp"
#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::data {

class NamedSplit {
 public:
  NamedSplit(const DatasetInfo& info, const std::string& split);

  std::int64_t size() const { return static_cast<std::int64_t>(y_.size()); }
  /** @brief Bytes held: every input and the labels. */
  std::size_t bytes() const;
  bool has_ragged() const;
  /** @brief Row `row`'s length in its first ragged input (0 without one). */
  std::int64_t length(std::int64_t row) const;
  /** @brief The batch of `count` rows (ragged inputs cut at the info's max_length). */
  Batch batch(const std::int64_t* rows, std::int64_t count, const BatchForm& form = {}) const;
  /** @brief Of the ragged elements a batch of these rows holds, the fraction that is padding. */
  double padding_fraction(const std::int64_t* rows, std::int64_t count) const;
  /** @brief What a batch too large for memory is told to do (refuse_batch's `remedy`). */
  void set_batch_remedy(std::string remedy) { remedy_ = std::move(remedy); }

 private:
  struct Input {
    InputInfo info;
    std::vector<std::uint8_t> data;     // fixed: the samples; ragged: the values, as stored
    std::vector<std::int64_t> offsets;  // ragged only
  };
  torch::Tensor fixed(const Input& in, const std::int64_t* rows, std::int64_t count,
                      const BatchForm& form) const;
  std::pair<torch::Tensor, torch::Tensor> ragged(const Input& in, const std::int64_t* rows,
                                                 std::int64_t count, std::int64_t max_length,
                                                 const BatchForm& form) const;
  std::string split_;
  std::vector<Input> inputs_;
  std::vector<std::int64_t> y_;
  std::int64_t max_length_ = 0;
  std::string remedy_ = kTrainBatchRemedy;
};

/** @brief The padded length of sequences whose longest is `longest`: a multiple of 8, cut. */
std::int64_t padded_length(std::int64_t longest, std::int64_t max_length);

}  // namespace slimtrain::data
