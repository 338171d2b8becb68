#pragma once
/**
 * @brief What `slimtrain report` reads from a run directory: RUN_DIR/metrics.jsonl (every event
 * rank 0 wrote, across launches and resumes) and RUN_DIR/flight_recorder/rank-*.jsonl (each
 * rank's recorder, written on a failure). A run still going may end in a half-written line: it
 * is left out, not an error.
 */
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace slimtrain::report {

using Points = std::vector<std::pair<double, double>>;

struct RunData {
  std::string dir;
  std::string name;  ///< the directory's last component, as the legend shows it
  std::vector<nlohmann::json> events;
  std::vector<nlohmann::json> recorder;  ///< flight recorder lines of every rank, in file order
  bool partial_tail = false;             ///< the last line was incomplete (a run still writing)

  /** @brief "done", "failed", "stopped for requeue" or "running (or ended without a record)". */
  std::string state() const;
  /** @brief Events named `name`, in order. */
  std::vector<const nlohmann::json*> all(const std::string& name) const;
  /** @brief The last event named `name`, or nullptr. */
  const nlohmann::json* last(const std::string& name) const;
  /**
   * @brief (step, value) of `field` in events `name`, one per step: a step run again after a
   * resume keeps its last value. `field` may be a path "step_ms/data".
   */
  Points series(const std::string& name, const std::string& field) const;
};

/** @brief Reads a run directory; DataError (exit 2) naming the directory, file or line. */
RunData load_run(const std::string& dir);

}  // namespace slimtrain::report
