#pragma once
/**
 * @brief The evaluation skip policy: local statistics, one bounded reduction, one agreement.
 *
 * Each rank computes EvalStats over its exact share; the packed statistics (3C + 2 doubles, and
 * C*C more up to the confusion limit) are all-reduced on an evaluation control plane (MPI, whatever
 * the device: an evaluation never touches the data plane) under `deadline_s`; then all ranks
 * agree() on the outcome. If any rank was late or failed, every rank skips this evaluation with the
 * same reason and the late ranks named, and training goes on. Above the confusion limit, the same
 * reduction gathers each rank's most frequent confusions (a fixed record in a slot of its own).
 * With retries, the local pass is run
 * again with half the batch before the evaluation is given up.
 */
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/eval/metrics.hpp"

namespace slimtrain::eval {

struct EvalPolicy {
  double deadline_s = 60.0;        ///< for the statistics reduction (the part a late rank delays)
  double agree_timeout_s = 600.0;  ///< for the agreement; missing it means a rank is gone
  int retries = 0;                 ///< extra attempts with a halved batch before skipping
};

struct EvalOutcome {
  bool ok = false;
  Metrics metrics;
  std::string reason;           ///< why it was skipped ("" when ok)
  std::vector<int> late_ranks;  ///< ranks that were late or failed
  /** @brief Some rank's local pass failed on its input (a DataError or ConfigError: a sequence
   * past the model's positions, say), not on time or a peer; not retried. */
  bool input_error = false;
  std::string input_error_message;  ///< this rank's, when it was one of them
  int attempts = 0;
  std::int64_t batch_size = 0;   ///< batch of the last attempt
  std::uint64_t bytes_sent = 0;  ///< payload this rank passed to the communicator
};

/** @brief Thrown by a local pass that another rank's lateness stopped before it began (a pass
 * whose forwards are collectives agrees on readiness first): this rank did not fail, and the
 * evaluation is skipped on every rank. A local pass's TimeoutError names the late ranks. */
class PeerLate : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** @brief Computes this rank's statistics with the given batch size; may throw. */
using LocalPass = std::function<EvalStats(std::int64_t batch_size)>;

/** @brief `local_pass` must return EvalStats(num_classes, confusion_max_classes)'s shape. */
EvalOutcome evaluate(const LocalPass& local_pass, comm::ControlPlane& comm,
                     std::int64_t num_classes, const std::vector<std::string>& class_names,
                     std::int64_t batch_size, const EvalPolicy& policy,
                     std::int64_t confusion_max_classes = kDefaultConfusionMaxClasses);

}  // namespace slimtrain::eval
