#pragma once
/**
 * @brief Each rank bound to its device, checked across the ranks: a start-up step of `train` and
 * `eval` (runtime/device.hpp does what one rank can do alone).
 */
#include <string>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::train {

/**
 * @brief device "cuda": each rank's GPU (runtime::find_gpu); its problems are agreed first, so
 * every rank fails alike and none waits in a collective a failed rank never joins; then every
 * rank's host and GPU UUID are gathered and the device is set only once no two ranks of a host
 * share a GPU (on GPUs in exclusive-process mode the second context would fail with a raw CUDA
 * error). ConfigError when they would, when there is no GPU, or without CUDA. Then, for any
 * device, runtime::bind_threads. Collective over `control` for cuda.
 */
runtime::DeviceBinding bind_device(const runtime::Runtime& runtime, comm::ControlPlane& control,
                                   const std::string& device, int threads);

}  // namespace slimtrain::train
