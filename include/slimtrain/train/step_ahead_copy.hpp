#pragma once
/**
 * @brief The step-ahead copy of a batch to the GPU, ordered as LibTorch's caching allocator needs.
 *
 * Batch n+1 is copied on a side stream while step n computes on the step's stream. The caching
 * allocator hands a block freed on a stream back at once to the next allocation on that stream,
 * whatever another stream still does with it. So:
 * - the batch's memory is allocated on the side stream that writes it: a block the step's
 *   queued kernels still read (an activation, a flag, freed by the host already) belongs to the
 *   step stream's pool and is never handed to the copy;
 * - when the step takes the batch, the step stream waits for the copy's mark (the host does not)
 *   and every tensor is recorded as used on the step stream (record_stream): freed later by the
 *   host, its block returns to the side stream only once the step's work queued until then is
 *   done, so the next copy cannot overwrite a batch a step still reads;
 * - a batch dropped before it is taken (an epoch restarted) was never used on the step stream:
 *   its block goes back to the side stream, whose next copy is queued after this one.
 * The pinned host tensors may go at once: the pinned allocator keeps a block until the copies
 * that read it have finished.
 *
 * The streams sit behind CopyStreams: CUDA's in training, a recording fake in the unit test.
 */
#include <torch/torch.h>

#include <memory>

#include "slimtrain/data/batch.hpp"

namespace slimtrain::train {

/** @brief The two streams as the step-ahead copy uses them. */
class CopyStreams {
 public:
  virtual ~CopyStreams() = default;
  /** @brief An uninitialised device tensor shaped as `host`, allocated on the side stream. */
  virtual torch::Tensor allocate_on_side(const torch::Tensor& host) = 0;
  /** @brief `host` into `device`, queued on the side stream; the host does not wait. */
  virtual void copy_on_side(const torch::Tensor& device, const torch::Tensor& host) = 0;
  /** @brief A mark after everything queued on the side stream so far. */
  virtual std::shared_ptr<void> mark_side() = 0;
  /** @brief The step stream waits for `mark` before its later work (the host does not). */
  virtual void step_waits(const std::shared_ptr<void>& mark) = 0;
  /** @brief `t` is used on the step stream from now on (record_stream). */
  virtual void use_on_step(const torch::Tensor& t) = 0;
};

/** @brief `device`'s streams: a side stream from the pool; the step's is the current one. */
std::unique_ptr<CopyStreams> device_copy_streams(const torch::Device& device);

/** @brief A batch whose copy to the device is in flight. */
struct CopyInFlight {
  data::Batch batch;             ///< on the device, raw until finished
  std::shared_ptr<void> copied;  ///< the side stream's mark after its copies
};

/** @brief Starts copying `host` (pinned) on the side stream. */
CopyInFlight start_copy(CopyStreams& streams, const data::Batch& host);
/** @brief The batch for the step: the step stream waits for its copy; its tensors used there. */
data::Batch take_copy(CopyStreams& streams, CopyInFlight&& in_flight);

}  // namespace slimtrain::train
