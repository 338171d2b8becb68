#include "slimtrain/train/nonfinite_steps.hpp"

#include "slimtrain/core/log.hpp"
#include "slimtrain/runtime/job_exit.hpp"

namespace slimtrain::train {

void NonfiniteSteps::skipped(std::int64_t step, const std::string& why) {
  if (in_a_row_++ == 0) first_ = step;
  if (s_.rt.rank() == 0) {
    s_.run_log->end_progress_line();
    log::warn("step ", step, ": ", why, ": its update is skipped on every rank (", in_a_row_,
              " in a row; the job ends at --max-nonfinite-steps ", s_.cfg.max_nonfinite_steps, ")");
  }
  s_.run_log->event("nonfinite", {{"step", step}, {"reason", why}, {"in_a_row", in_a_row_}});
}

// No abort: every rank ends here at the same step, its last checkpoint landed.
int NonfiniteSteps::end_run(Checkpointer& checkpoints, std::int64_t step) {
  s_.run_log->end_progress_line();
  checkpoints.wait();
  const std::string last = checkpoints.last_written();
  const std::string why = detail::concat(
      "training diverged: ", in_a_row_, " steps in a row (", first_, " to ", step,
      ") had a non-finite loss or gradient norm and updated nothing (--max-nonfinite-steps ",
      s_.cfg.max_nonfinite_steps, "); the weights are those of step ", first_ - 1);
  if (s_.rt.rank() == 0) {
    log::error(why);
    log::error("the last checkpoint, whose weights are finite: ",
               last.empty() ? std::string("none written") : last,
               "; resume it with --resume auto and a lower --lr");
  }
  s_.run_log->event(
      "failed",
      {{"step", step}, {"reason", why}, {"first_nonfinite_step", first_}, {"checkpoint", last}});
  return kExitFailure;
}

}  // namespace slimtrain::train
