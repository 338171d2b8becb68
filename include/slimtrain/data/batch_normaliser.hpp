#pragma once
/**
 * @brief Finishes raw batches (BatchForm::raw, the GPU step's) on the device they were copied to:
 * uint8 to float32, then (x - mean[c]) * (1 / std[c]) per channel, the same float operations in
 * the same order as the loader's on the host, so a batch finished here equals the host's bit for
 * bit (tests/unit/test_batch_normaliser.cpp). A GPU copies a quarter of the bytes (uint8 against
 * float32) and spends none of the host's time converting.
 */
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>

#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::data {

class BatchNormaliser {
 public:
  /** @brief The file's mean and std (layout 1) or each input's (layout 2), on `device`, once. */
  BatchNormaliser(const DatasetInfo& info, const torch::Device& device);
  /** @brief `raw`'s inputs as the model takes them, on their device; a batch not raw as it is. */
  Batch finish(Batch raw) const;

 private:
  struct Channels {
    torch::Tensor mean, scale;  ///< [C, 1] float32 on the device; undefined: no normalisation
    std::int64_t count = 1;
  };
  static Channels channels_of(const std::vector<float>& mean, const std::vector<float>& std,
                              std::int64_t count, const torch::Device& device);
  static torch::Tensor normalise(const torch::Tensor& x, const Channels& c);
  Channels x_;
  std::map<std::string, Channels> inputs_;  ///< layout 2, the inputs with a mean/std
  std::map<std::string, bool> ragged_;      ///< layout 2: which inputs are ragged
};

}  // namespace slimtrain::data
