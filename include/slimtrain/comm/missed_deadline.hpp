#pragma once
/**
 * @brief What every backend does when a caller's wait passes an operation's deadline: the flight
 * recorder notes it, the peers are asked how far they are (StallInspector), the missing ranks
 * are named in one error line, the recorder is dumped, and the TimeoutError to throw comes back.
 * The MPI communicator and the NCCL data plane both end here (NCCL then aborts its communicator).
 */
#include <cstdint>
#include <string>

#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/stall_inspector.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {

/** @brief The operation that missed its deadline, and where it was issued. */
struct MissedOperation {
  const std::string& communicator;  ///< "train", "control", "data"
  std::uint32_t id;                 ///< the communicator's StallInspector id
  OpSummary op;
  double timeout_s;
};

/**
 * @brief "data all_reduce seq 7 of 4096 bytes missed its deadline of 5 s; missing ranks: 1 on
 * node2 (...)", logged as an error; the recorder noted and dumped. Waits up to `grace_s` for the
 * peers' answers.
 */
TimeoutError missed_deadline(const MissedOperation& missed, StallInspector& inspector,
                             double grace_s, FlightRecorder& recorder);

}  // namespace slimtrain::comm
