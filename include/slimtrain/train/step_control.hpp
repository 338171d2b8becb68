#pragma once
/**
 * @brief The per-step control decision: one small reduction on the control plane per training
 * step, whatever the device. It carries the stop request (any rank), the timed checkpoint (rank
 * 0's clock), the loss sum at log steps, the lowest rank whose loss is not finite, and every
 * rank's data-plane fingerprint and operation count (min and max over ranks).
 *
 * It runs once the step's gradient buckets are issued on the data plane. Ranks whose data planes
 * issued different operations (a desync: the likely truth behind a 600 s watchdog wait on one
 * all-reduce) disagree on the fingerprint, so the job ends within the step with a message naming
 * the ranks on each side and the first diverging operation, instead of waiting for a deadline
 * that different collectives would never meet.
 *
 * On the MPI plane a mismatch must be caught before it runs, because Open MPI corrupts memory
 * when ranks run all-reduces of different sizes (seen here: a 4 MiB piece read into a 10 KiB
 * buffer): check_before_backward() compares the fingerprints of what was issued before the step's
 * buckets, whose own sequence is the same on every rank by construction (GradientSync), so each
 * bucket may start as soon as backward has filled it.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

/** @brief What this rank brings to the step's decision. */
struct StepVote {
  std::int64_t step = 0;        ///< the step being completed (1-based)
  bool stop = false;            ///< a stop signal arrived here
  bool checkpoint_due = false;  ///< rank 0's clock says a timed checkpoint is due (others: false)
  std::optional<double> loss;   ///< this rank's loss, on log steps only
  bool nonfinite_loss = false;  ///< this rank's loss is NaN or infinite
};

/** @brief The same on every rank. */
struct StepDecision {
  bool stop = false;
  bool checkpoint_due = false;
  std::optional<double> mean_loss;    ///< over ranks, on log steps
  std::optional<int> nonfinite_rank;  ///< the lowest rank whose loss is not finite
};

/** @brief A desync: the message names ranks and operations (a CommError, so the job ends). */
class DesyncError : public CommError {
 public:
  using CommError::CommError;
  const char* kind() const override { return "desync"; }
};

class StepControl {
 public:
  /** @param hosts every rank's hostname, named in reports when ranks span several hosts. */
  StepControl(comm::ControlPlane& control, comm::DataPlane& data, std::vector<std::string> hosts);

  /** @brief One control reduction; DesyncError on a fingerprint mismatch (after diagnosis). */
  StepDecision decide(const StepVote& vote);
  /**
   * @brief On a CPU (MPI) data plane of more than one rank: one small reduction comparing the
   * operations issued so far, before the step issues its buckets; DesyncError on a mismatch.
   * Nothing on NCCL or one rank.
   */
  void check_before_backward(std::int64_t step);

 private:
  [[noreturn]] void report_desync(std::int64_t step, const char* when = "");

  comm::ControlPlane& control_;
  comm::DataPlane& data_;
  std::vector<std::string> hosts_;
  std::uint64_t agreed_ops_ = 0;  ///< data-plane operations issued when ranks last agreed
};

/**
 * @brief Pure: names the first diverging operation. `ops[r]` are rank r's data-plane operations
 * after the last agreed one, oldest first. "" when they are all the same.
 * "rank 1 issued all_reduce #57 of 1,868,076,012 bytes [injected] where ranks 0, 2, 3 issued
 * all_reduce #57 of 816 bytes [grad-bucket]"
 */
std::string first_divergence(const std::vector<std::vector<comm::IssuedOp>>& ops,
                             const std::vector<std::string>& hosts);

}  // namespace slimtrain::train
