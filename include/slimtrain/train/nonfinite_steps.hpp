#pragma once
/**
 * @brief Steps whose update was skipped because the loss or the gradient norm was not finite on
 * some rank (every rank skips alike: the decision is reduced), counted in a row against
 * --max-nonfinite-steps: each is named in the log and a `nonfinite` event, and past the limit the
 * run ends with exit 1 on every rank and its last checkpoint, whose weights are finite.
 */
#include <cstdint>
#include <string>

#include "slimtrain/train/checkpointer.hpp"
#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

class NonfiniteSteps {
 public:
  explicit NonfiniteSteps(Session& s) : s_(s) {}

  /** @brief Step `step` updated nothing, for `why` ("the loss is not finite on rank 1 (host)"). */
  void skipped(std::int64_t step, const std::string& why);
  /** @brief A step updated the weights: the count in a row starts again. */
  void updated() { in_a_row_ = 0; }
  /** @brief --max-nonfinite-steps skipped steps in a row. */
  bool diverged() const { return in_a_row_ >= s_.cfg.max_nonfinite_steps; }
  /**
   * @brief Ends a diverged run at `step` (every rank reaches it at the same step): waits for the
   * checkpoint in flight, reports, logs the `failed` event, returns exit code 1.
   */
  int end_run(Checkpointer& checkpoints, std::int64_t step);

 private:
  Session& s_;
  std::int64_t in_a_row_ = 0;  ///< steps whose update was skipped, in a row
  std::int64_t first_ = 0;     ///< the first of them
};

}  // namespace slimtrain::train
