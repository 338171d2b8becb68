#pragma once
/**
 * @brief This process's resident memory, from /proc/self/status: what the done event reports
 * beside the bytes of the training state, so a run shows how much memory its state costs.
 */
#include <cstdint>

namespace slimtrain::runtime {

/** @brief Resident bytes now (VmRSS); 0 where /proc does not say. */
std::uint64_t resident_bytes();

/** @brief The most resident bytes since start-up or the last reset_peak_resident (VmHWM). */
std::uint64_t peak_resident_bytes();

/**
 * @brief Starts the peak afresh from the resident bytes now (writes 5 to /proc/self/clear_refs),
 * so a peak measures a phase and not start-up's transient buffers. False where it cannot.
 */
bool reset_peak_resident();

/** @brief What the host could give processes now without swapping (MemAvailable), at most what
 * this process's cgroup (v2) still allows (memory.max less memory.current); 0 unknown. */
std::uint64_t available_memory_bytes();

}  // namespace slimtrain::runtime
