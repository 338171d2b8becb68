#include "slimtrain/train/step_update.hpp"

#include <cmath>

#include "slimtrain/core/detail/concat.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/optimizers.hpp"

namespace slimtrain::train {

StepUpdate::StepUpdate(Session& s, NonfiniteSteps& nonfinite, std::vector<std::string> hosts)
    : s_(s), nonfinite_(nonfinite), hosts_(std::move(hosts)) {
  if (s.device_step) flags_ = std::make_unique<StepFlags>(s.torch_device, s.rt.rank(), s.rt.size());
}

void StepUpdate::begin(std::int64_t step) {
  loss_sum_ = 0.0;
  if (flags_) flags_->begin_step(step);
}

void StepUpdate::add_loss(const torch::Tensor& loss) {
  if (flags_)
    flags_->add_loss(loss);
  else
    loss_sum_ += loss.item<double>();  // the host's step reads it: its vote needs it
}

void StepUpdate::launched() {
  if (flags_) flags_->reduce(*s_.data_plane);
}

void StepUpdate::fill(StepVote& vote, bool log_now, std::int64_t micro_batches) const {
  // On the device only log steps read the loss (a synchronisation that often, not every step).
  if (log_now)
    vote.loss = (flags_ ? flags_->loss_now() : loss_sum_) / static_cast<double>(micro_batches);
  vote.nonfinite_loss = !flags_ && !std::isfinite(loss_sum_);
}

void StepUpdate::decided() {
  // While this step's gradients travel: the previous step's copy has long landed.
  if (flags_) settle();
}

void StepUpdate::settle() {
  if (!flags_) return;
  const std::optional<StepOutcome> outcome = flags_->learn();
  // The read waited for the device; an aborted communicator lets it return with the flags of a
  // reduction that never completed: the failure, kept before the abort, is thrown instead.
  s_.data_plane->throw_if_failed();
  if (outcome) learned(*outcome);
}

void StepUpdate::learned(const StepOutcome& outcome) {
  if (!outcome.skipped()) {
    nonfinite_.updated();
    return;
  }
  dynamic_cast<SteppedOptimizer&>(*s_.optimizer).undo_step();
  if (s_.masters) s_.masters->publish();  // the weights as the masters are again
  nonfinite_.skipped(outcome.step, outcome.nonfinite_rank
                                       ? nonfinite_loss(*outcome.nonfinite_rank)
                                       : std::string("the gradient norm is not finite"));
}

std::string StepUpdate::nonfinite_loss(int rank) const {
  const auto r = static_cast<std::size_t>(rank);
  return detail::concat("the loss is not finite on rank ", r,
                        r < hosts_.size() ? " (" + hosts_[r] + ")" : "");
}

void StepUpdate::apply(const StepDecision& decision, std::int64_t step) {
  if (flags_)
    apply_on_device();
  else
    apply_on_host(decision, step);
}

// A non-finite loss on any rank (the decision names the lowest), or a non-finite norm of the
// averaged gradients (the same on every rank), skips the update everywhere: the weights stay as
// they were, as a loss scaler does on overflow.
void StepUpdate::apply_on_host(const StepDecision& decision, std::int64_t step) {
  std::string nonfinite;
  const double max_norm = s_.cfg.clip_grad_norm;
  if (decision.nonfinite_rank) {
    nonfinite = nonfinite_loss(*decision.nonfinite_rank);
  } else if (max_norm > 0) {
    const torch::Tensor norm = s_.shards ? s_.shards->clip_grad_norm(max_norm, *s_.data_plane)
                                         : clip_grad_norm(s_.optimized_parameters(), max_norm);
    if (!std::isfinite(norm.item<double>())) nonfinite = "the gradient norm is not finite";
  }
  if (!nonfinite.empty()) {
    nonfinite_.skipped(step, nonfinite);
    return;
  }
  s_.optimizer->step();
  gather_weights();
  nonfinite_.updated();
}

// Nothing here reads the device: the flags, the norm and the skip stay on it.
void StepUpdate::apply_on_device() {
  const double max_norm = s_.cfg.clip_grad_norm;
  torch::Tensor norm;
  if (max_norm > 0)
    norm = s_.shards ? s_.shards->clip_grad_norm(max_norm, *s_.data_plane)
                     : clip_grad_norm(s_.optimized_parameters(), max_norm);
  dynamic_cast<SteppedOptimizer&>(*s_.optimizer).set_found_inf(flags_->found_inf(norm));
  s_.optimizer->step();
  gather_weights();  // a skipped step gathers the shards it left as they were
  flags_->publish();
}

void StepUpdate::gather_weights() {
  if (s_.masters) s_.masters->publish();  // --weights bf16: the updated masters, rounded
  if (!s_.shards) return;                 // every rank's updated shard to every rank
  s_.shards->start_gather(*s_.data_plane);
  if (!s_.gather_overlap.on && s_.shards->holds_weights()) s_.shards->wait_gathered();
}

}  // namespace slimtrain::train
