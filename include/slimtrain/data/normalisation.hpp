#pragma once
/**
 * @brief Per-channel mean and std: accumulated by `prep` while it writes a file, and computed at
 * load time for a file that has none on /train/x (one pass over the training split on rank 0,
 * sent to the other ranks over the control plane).
 */
#include <cstdint>
#include <vector>

#include "slimtrain/comm/types.hpp"
#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::comm {
class ControlPlane;
}

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
 * @brief Collective when `control` is given. A file with mean/std on /train/x keeps them; one
 * without gets them from compute_train_normalisation on rank 0, sent to every rank (the ranks
 * wait under `options`' deadline), and rank 0 logs one line saying so.
 */
void ensure_normalisation(DatasetInfo& info, comm::ControlPlane* control = nullptr,
                          const comm::OpOptions& options = {});

/** @brief read_dataset_info, then ensure_normalisation on this process alone. */
DatasetInfo read_normalised_info(const std::string& path);

}  // namespace slimtrain::data
