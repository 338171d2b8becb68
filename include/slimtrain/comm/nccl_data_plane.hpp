#pragma once
/**
 * @brief The GPU data plane: NCCL over CUDA tensors (compiled only with SLIMTRAIN_HAVE_NCCL).
 *
 * NCCL has no timeout of its own, so this backend puts a CPU-side deadline around it, as
 * nccl-tests and torchft do: a non-blocking communicator (config.blocking = 0) on its own stream.
 * Each operation waits on an event of the caller's current (compute) stream, enqueues all its
 * pieces in one NCCL group (no host round trip per piece) and records a done event; wait() first
 * makes the caller's stream wait on that event (so later kernels are ordered after the collective
 * on the GPU), then polls the event and ncclCommGetAsyncError only to enforce the deadline. Past
 * the deadline it runs the stall inspection (over MPI), calls ncclCommAbort and throws
 * TimeoutError: the trainer then ends the job, as on CPU. Evaluations never come here (they use
 * the control plane), so a late evaluation cannot abort NCCL.
 */
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"

namespace slimtrain::comm {

/**
 * @brief The bootstrap id: `root` calls ncclGetUniqueId and broadcasts its bytes over the control
 * plane (under its deadline). Needs no device; collective.
 */
ncclUniqueId nccl_bootstrap_id(ControlPlane& control, int root = 0);

/** @brief Collective over the world; `device` must be the current CUDA device. */
std::unique_ptr<DataPlane> make_nccl_data_plane(const runtime::Runtime& runtime,
                                                const torch::Device& device, std::string name,
                                                const CommConfig& config = {});

}  // namespace slimtrain::comm
