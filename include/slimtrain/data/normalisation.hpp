#pragma once
/**
 * @brief Per-channel mean and std: accumulated by `prep` while it writes a file, and computed at
 * load time for a file that has none on /train/x (one pass over the training split; under
 * mpirun on rank 0 alone, sent to the others by train/normalisation_setup.hpp).
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::data {

/** @brief Sums and sums of squares per channel, exact for uint8. */
class ChannelMoments {
 public:
  /** @brief `channels` channels of `inner` elements each per sample (channels_of()). */
  ChannelMoments(std::int64_t channels, std::int64_t inner);
  /** @brief `count` samples stored as `type`, channels-first within each sample. */
  void add(const void* samples, std::int64_t count, ElementType type);
  /** @brief sums[0..C) then sums of squares[C..2C): what ranks add up before finish(). */
  std::vector<double>& sums() { return sums_; }
  /** @brief mean and std (population) of `samples` samples' worth of sums(). */
  void finish(std::int64_t samples, std::vector<float>& mean, std::vector<float>& std) const;

 private:
  std::int64_t channels_, inner_;
  std::vector<double> sums_;
};

/** @brief mean/std of /train/x in stored units, one pass in blocks (no communication). */
void compute_train_normalisation(DatasetInfo& info);

/**
 * @brief This process alone: a file with mean/std on /train/x keeps them; one without gets them
 * from compute_train_normalisation, and one log line says so.
 */
void ensure_normalisation(DatasetInfo& info);

/** @brief The line ensure_normalisation logs: the values computed, and that prep writes them. */
void log_computed_normalisation(const DatasetInfo& info);

/** @brief mean then std as bytes, for sending to other ranks. */
std::string normalisation_bytes(const DatasetInfo& info);
/** @brief Sets mean/std from normalisation_bytes' form; false when the size does not fit. */
bool set_normalisation_bytes(DatasetInfo& info, const std::string& bytes);

/** @brief read_dataset_info, then ensure_normalisation on this process alone. */
DatasetInfo read_normalised_info(const std::string& path);

}  // namespace slimtrain::data
