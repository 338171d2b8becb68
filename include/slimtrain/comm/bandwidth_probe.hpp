#pragma once
/**
 * @brief The data plane's all-reduce bandwidth, measured at start-up, so that deadlines scale with
 * the cluster the job runs on: a slow link gets longer deadlines, a fast fabric is not held to a
 * worst case written for another one.
 *
 * After an untimed warm-up, timed all-reduces of growing size (256 KiB, 1 MiB, 4 MiB, 16 MiB)
 * until one takes at least 50 ms on the slowest rank (that one runs twice: the faster counts);
 * the slowest rank's time decides (over the control plane), so every rank measures the same
 * figure and derives the same deadlines.
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"

namespace slimtrain::comm {

struct BandwidthProbe {
  std::uint64_t bytes = 0;  ///< payload of the all-reduce that decided
  double seconds = 0.0;     ///< its time on the slowest rank
  /** @brief Payload bytes per second (algorithm bandwidth); 0 with one rank. */
  double bytes_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0; }
  /** @brief "612 MB/s: a 4 MiB all-reduce in 6.9 ms" */
  std::string describe() const;
};

/** @brief Deadlines assume a link this many times slower than measured (contention, noise). */
inline constexpr double kFloorSafetyFactor = 4.0;

/** @brief Collective over both planes; no operation with a single rank. */
BandwidthProbe measure_bandwidth(DataPlane& data, ControlPlane& control);

/**
 * @brief --chunk-mb 0: which of several data planes, alike but for their piece size, all-reduces
 * `bytes` fastest. Each is timed twice, in turn (the slowest rank's time, the better of the two);
 * a later candidate must beat the first by 10% to be chosen, so noise keeps the default. Over
 * shared memory 4 MiB pieces are fastest (bench/allreduce); over a token-bucket-shaped TCP link
 * 1 MiB pieces kept the link at its rate where 4 MiB ones fell to two thirds (bench/cluster).
 * Returns the index of the chosen plane; `seconds` gets each plane's time.
 */
std::size_t fastest_plane(const std::vector<DataPlane*>& planes, ControlPlane& control,
                          std::size_t bytes, std::vector<double>& seconds);
/** @brief fastest_plane's rule: the fastest of `seconds`, if it beats the first by 10%; else 0. */
std::size_t pick_fastest(const std::vector<double>& seconds);

}  // namespace slimtrain::comm
