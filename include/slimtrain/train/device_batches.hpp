#pragma once
/**
 * @brief The training batches as the step takes them. On a CPU: the loader's, as they are. On a
 * GPU: the loader hands them over as stored, in pinned memory (data::BatchForm); the copy of batch
 * n+1 to the device runs on a side stream while step n computes (step_ahead_copy.hpp: allocated
 * on that stream, recorded on the step's when taken), and the step's stream waits for it only
 * when it takes the batch, then converts and normalises it there (data::BatchNormaliser). The
 * host never waits for a copy.
 */
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/batch_normaliser.hpp"
#include "slimtrain/data/train_loader.hpp"
#include "slimtrain/train/step_ahead_copy.hpp"

namespace slimtrain::train {

/** @brief The loader's form for a step on `device`: raw and pinned on a GPU, else as on a CPU. */
data::BatchForm batch_form(const torch::Device& device);

class DeviceBatches {
 public:
  /** @brief Over `loader`, whose form is batch_form(device); both outlive this. */
  DeviceBatches(data::TrainLoader& loader, const data::DatasetInfo& info,
                const torch::Device& device);
  ~DeviceBatches();
  DeviceBatches(const DeviceBatches&) = delete;
  DeviceBatches& operator=(const DeviceBatches&) = delete;

  /** @brief The loader's start_epoch; the batch copied ahead of it is dropped (safely: it was
   * never used on the step's stream, see step_ahead_copy.hpp). */
  void start_epoch(std::int64_t epoch, std::int64_t skip_steps = 0);
  /** @brief The next batch on the device, ready for the step's stream; false at the epoch's end. */
  bool next(data::Batch& out);

 private:
  /** @brief Takes the loader's next batch and starts its copy; nullopt at the epoch's end. */
  std::optional<CopyInFlight> fetch();

  data::TrainLoader& loader_;
  torch::Device device_;
  std::unique_ptr<data::BatchNormaliser> normaliser_;  ///< GPU only
  std::unique_ptr<CopyStreams> streams_;               ///< GPU only
  std::optional<CopyInFlight> ahead_;
  bool started_ = false;  ///< whether ahead_ holds this epoch's next batch (or its end)
};

}  // namespace slimtrain::train
