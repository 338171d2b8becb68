#include "slimtrain/eval/evaluator.hpp"

#include <algorithm>
#include <exception>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::eval {
namespace {

// Only after a failed agreement: which ranks were late or failed, as a MAX over 0/1 flags, and
// whether any rank's failure was its input (one more flag in the same reduction).
std::vector<int> gather_late_ranks(comm::ControlPlane& control, bool i_failed,
                                   const std::vector<int>& i_saw_missing, bool input_error,
                                   double timeout_s, bool& any_input_error) {
  const auto size = static_cast<std::size_t>(control.size());
  std::vector<std::int64_t> flags(size + 1, 0);
  if (i_failed) flags[static_cast<std::size_t>(control.rank())] = 1;
  for (int r : i_saw_missing)
    if (r >= 0 && r < control.size()) flags[static_cast<std::size_t>(r)] = 1;
  flags[size] = input_error ? 1 : 0;
  comm::OpOptions options;
  options.timeout_s = timeout_s;
  options.tag = "eval-late-ranks";
  flags = control.all_reduce(std::move(flags), comm::ReduceOp::max, options);
  std::vector<int> late;
  for (std::size_t r = 0; r < size; ++r)
    if (flags[r]) late.push_back(static_cast<int>(r));
  any_input_error = flags[size] != 0;
  return late;
}

}  // namespace

EvalOutcome evaluate(const LocalPass& local_pass, comm::ControlPlane& comm,
                     std::int64_t num_classes, const std::vector<std::string>& class_names,
                     std::int64_t batch_size, const EvalPolicy& policy,
                     std::int64_t confusion_max_classes) {
  EvalOutcome outcome;
  const std::uint64_t bytes_before = comm.bytes_sent();
  std::int64_t batch = std::max<std::int64_t>(1, batch_size);
  for (int attempt = 0; attempt <= policy.retries; ++attempt) {
    outcome.attempts = attempt + 1;
    outcome.batch_size = batch;
    std::string local_problem;
    std::vector<int> missing;
    const EvalStats empty(num_classes, confusion_max_classes);
    EvalStats stats = empty;
    outcome.input_error_message.clear();
    std::string peer_late;
    try {
      stats = local_pass(batch);
    } catch (const PeerLate& e) {
      peer_late = e.what();
      stats = empty;
    } catch (const TimeoutError& e) {  // late to a pass that starts together: who was
      local_problem = e.what();
      missing = e.missing_ranks();
      stats = empty;
    } catch (const ConfigError& e) {  // the data or the model: retrying cannot help
      outcome.input_error_message = e.what();
      local_problem = std::string("local evaluation failed: ") + e.what();
      stats = empty;
    } catch (const DataError& e) {
      outcome.input_error_message = e.what();
      local_problem = std::string("local evaluation failed: ") + e.what();
      stats = empty;
    } catch (const std::exception& e) {
      // This rank still takes part in the reduction (with empty statistics) so that every rank
      // issues the same collectives; its failure is voted down in agree().
      local_problem = std::string("local evaluation failed: ") + e.what();
      stats = empty;
    }

    if (stats.keeps_matrix() != empty.keeps_matrix() || stats.num_classes() != num_classes) {
      local_problem = "local evaluation failed: statistics of another shape";
      stats = empty;
    }
    // 3C + 2 numbers (and C^2 up to the limit), in the communicator's pieces; above the limit
    // each rank's most frequent confusions in a slot of its own, so one sum gathers them.
    std::vector<double> packed = stats.pack();
    const std::size_t stats_size = packed.size();
    if (!empty.keeps_matrix()) {
      const std::vector<std::int64_t> mine = pack_top_confusions(stats);
      packed.resize(stats_size + mine.size() * static_cast<std::size_t>(comm.size()), 0.0);
      const std::size_t slot = stats_size + mine.size() * static_cast<std::size_t>(comm.rank());
      for (std::size_t i = 0; i < mine.size(); ++i) packed[slot + i] = static_cast<double>(mine[i]);
    }
    bool reduced = false;
    try {
      comm::OpOptions options;
      options.timeout_s = policy.deadline_s;
      options.tag = "eval-stats";
      packed = comm.all_reduce(std::move(packed), comm::ReduceOp::sum, options);
      reduced = true;
    } catch (const TimeoutError& e) {
      local_problem = e.what();
      missing = e.missing_ranks();
    }

    comm::OpOptions agree_options;
    agree_options.timeout_s = policy.agree_timeout_s;
    agree_options.tag = "eval-agree";
    const bool all_ok =
        comm.agree(reduced && local_problem.empty() && peer_late.empty(), agree_options);
    if (all_ok) {
      outcome.ok = true;
      const EvalStats reduced_stats = EvalStats::unpack(
          std::vector<double>(packed.begin(),
                              packed.begin() + static_cast<std::ptrdiff_t>(stats_size)),
          num_classes, confusion_max_classes);
      if (reduced_stats.keeps_matrix()) {
        outcome.metrics = compute_metrics(reduced_stats, class_names);
      } else {
        const std::vector<std::int64_t> gathered(
            packed.begin() + static_cast<std::ptrdiff_t>(stats_size), packed.end());
        const SampledConfusions sampled = merge_top_confusions(gathered);
        outcome.metrics = compute_metrics(reduced_stats, class_names, &sampled);
      }
      outcome.reason.clear();
      outcome.late_ranks.clear();
      break;
    }
    outcome.late_ranks = gather_late_ranks(
        comm, !local_problem.empty() && missing.empty() && reduced, missing,
        !outcome.input_error_message.empty(), policy.agree_timeout_s, outcome.input_error);
    outcome.reason = !local_problem.empty() ? local_problem
                     : !peer_late.empty()
                         ? peer_late
                         : "another rank was late or failed in the evaluation reduction";
    if (outcome.input_error) break;  // the same input fails again, whatever the batch
    if (attempt < policy.retries) {
      log::warn("evaluation attempt ", attempt + 1, " failed (", outcome.reason,
                "); retrying with batch ", std::max<std::int64_t>(1, batch / 2));
      batch = std::max<std::int64_t>(1, batch / 2);
    }
  }
  outcome.bytes_sent = comm.bytes_sent() - bytes_before;
  return outcome;
}

}  // namespace slimtrain::eval
