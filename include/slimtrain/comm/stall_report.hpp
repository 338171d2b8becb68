#pragma once
/**
 * @brief The analysis behind every TimeoutError's list of missing ranks: from each peer's answer
 * (how many operations it issued and completed, what it runs now, what it is doing), who did not
 * reach the operation that timed out, and why. Pure functions; the answers come from the
 * StallInspector (stall_inspector.hpp).
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/comm/types.hpp"

namespace slimtrain::comm {

/** @brief One operation as stall and desync reports name it. */
struct OpSummary {
  std::uint64_t seq = 0;  ///< 0: none
  OpKind kind = OpKind::none;
  std::uint64_t bytes = 0;
  std::string tag;
  /** @brief "all_reduce #57 of 1,868,076,012 bytes [grad-bucket]" */
  std::string describe() const;
  bool same_operation(const OpSummary& other) const {
    return seq == other.seq && kind == other.kind && bytes == other.bytes;
  }
};

/** @brief "1,868,076,012": byte counts in reports are read by people. */
std::string with_thousands(std::uint64_t value);

/** @brief One peer's answer; answered == false when it did not answer within the grace period. */
struct PeerProgress {
  int rank = -1;
  std::string host;
  bool answered = false;
  bool known = false;  ///< false: the peer has no communicator with that id (not created or gone)
  std::uint64_t issued = 0;
  std::uint64_t completed = 0;
  OpSummary current;      ///< running on the communicator asked about
  std::string busy_comm;  ///< another communicator on which it runs an operation ("" if none)
  OpSummary busy;
  std::string activity;  ///< "" when the rank never said
  std::int64_t activity_step = -1;
};

/** @brief Ranks that have not reached `seq`, and the message naming them. */
struct StallReport {
  std::vector<int> missing;
  /** @brief "1 on node2 (at seq 4; now: evaluation at step 8, running all_reduce #3 of 816
   * bytes [eval-stats] on eval)" */
  std::string description;
};

/**
 * @brief Pure analysis of the answers about the operation `mine` (this rank's, timed out):
 * missing are the peers that issued fewer operations or did not answer, each with what it is
 * doing now; when every peer has issued it, the peers whose communication is still behind, or
 * that issued a different operation under the same sequence number (a desync), are named.
 */
StallReport analyse_stall(const OpSummary& mine, const std::vector<PeerProgress>& peers);

/** @brief Up to this many ranks every timed-out rank asks every other one (56 messages at 8). */
inline constexpr int kAskEveryoneUpTo = 8;

/**
 * @brief The ranks `rank` asks when an operation times out. When every rank times out together
 * (the usual case: one late rank), everyone asking everyone is N^2 messages inside the grace
 * period, 65,000 at 256 ranks. Above kAskEveryoneUpTo ranks only rank 0 asks every rank (the
 * full report); any other rank asks rank 0 and its two ring neighbours, the ranks a ring
 * all-reduce waits on directly: at most 4 (N - 1) messages in all.
 */
std::vector<int> inquiry_targets(int rank, int size);

}  // namespace slimtrain::comm
