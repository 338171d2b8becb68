#pragma once
/**
 * @brief The training batches as the step takes them. On a CPU: the loader's, as they are. On a
 * GPU: the loader hands them over as stored, in pinned memory (data::BatchForm); the copy of batch
 * n+1 to the device runs on a side stream while step n computes, and the step's stream waits for
 * it only when it takes the batch, then converts and normalises it there (data::BatchNormaliser).
 * The host never waits for a copy.
 */
#include <c10/core/Event.h>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "slimtrain/data/batch.hpp"
#include "slimtrain/data/batch_normaliser.hpp"
#include "slimtrain/data/train_loader.hpp"

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

  /** @brief The loader's start_epoch; the batch copied ahead of it is dropped. */
  void start_epoch(std::int64_t epoch, std::int64_t skip_steps = 0);
  /** @brief The next batch on the device, ready for the step's stream; false at the epoch's end. */
  bool next(data::Batch& out);

 private:
  struct InFlight {
    data::Batch batch;                 ///< on the device, raw until finished
    std::optional<c10::Event> copied;  ///< on the side stream, after the copies
  };
  /** @brief Takes the loader's next batch and starts its copy; nullopt at the epoch's end. */
  std::optional<InFlight> fetch();

  data::TrainLoader& loader_;
  torch::Device device_;
  std::unique_ptr<data::BatchNormaliser> normaliser_;  ///< GPU only
  std::optional<c10::Stream> side_;                    ///< GPU only: the copies' stream
  std::optional<InFlight> ahead_;
  bool started_ = false;  ///< whether ahead_ holds this epoch's next batch (or its end)
};

}  // namespace slimtrain::train
