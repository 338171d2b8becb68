#include "slimtrain/train/stragglers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "slimtrain/core/log.hpp"
#include "slimtrain/train/run_log.hpp"

namespace slimtrain::train {
namespace {

// Per-rank compute times go into the train event up to this many ranks; beyond it the event
// keeps the slowest and the median only, so a line stays small on a large job.
constexpr std::size_t kMaxRanksListed = 64;

double lower_median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// "2x", "1.1x", "238x": one decimal below 10, none when it is .0.
std::string times_text(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio < 10 ? "%.1f" : "%.0f", ratio);
  std::string out = text;
  if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
  return out + "x";
}

}  // namespace

double compute_ms(const PhaseMs& phases) {
  double sum = 0;
  for (int p = 0; p < kPhases; ++p)
    if (p != kSync) sum += phases[static_cast<std::size_t>(p)];
  return sum;
}

std::vector<PhaseMs> gather_phase_times(comm::ControlPlane& control, const PhaseMs& mine,
                                        double timeout_s) {
  // Microseconds as integers: the control plane's gather is typed, and 1 us is plenty here.
  std::vector<std::int64_t> words(kPhases);
  for (int p = 0; p < kPhases; ++p)
    words[static_cast<std::size_t>(p)] = std::llround(1e3 * mine[static_cast<std::size_t>(p)]);
  comm::OpOptions options;
  options.tag = "rank-times";
  options.timeout_s = timeout_s;
  const std::vector<std::int64_t> all = control.all_gather(words, options);
  std::vector<PhaseMs> out(all.size() / kPhases);
  for (std::size_t r = 0; r < out.size(); ++r)
    for (std::size_t p = 0; p < kPhases; ++p)
      out[r][p] = 1e-3 * static_cast<double>(all[r * kPhases + p]);
  return out;
}

StragglerWatch::StragglerWatch(double threshold, int windows, std::vector<std::string> hosts)
    : threshold_(threshold), windows_(std::max(1, windows)), hosts_(std::move(hosts)) {}

nlohmann::json StragglerWatch::add_window(const std::vector<PhaseMs>& per_rank) {
  warning_.reset();
  std::vector<double> compute;
  for (const PhaseMs& r : per_rank) compute.push_back(compute_ms(r));
  if (compute.empty()) return nullptr;
  const auto slowest =
      static_cast<int>(std::max_element(compute.begin(), compute.end()) - compute.begin());
  const double median = lower_median(compute);
  const double slow = compute[static_cast<std::size_t>(slowest)];
  nlohmann::json record = {{"slowest", slowest}, {"slowest_ms", slow}, {"median_ms", median}};
  if (static_cast<std::size_t>(slowest) < hosts_.size())
    record["slowest_host"] = hosts_[static_cast<std::size_t>(slowest)];
  if (compute.size() <= kMaxRanksListed) record["compute_ms"] = compute;

  const bool is_slow = threshold_ > 0 && median > 0 && slow > median * (1.0 + threshold_);
  if (!is_slow) {
    streak_ = 0;
    streak_rank_ = -1;
    return record;
  }
  if (slowest != streak_rank_) {
    streak_rank_ = slowest;
    streak_ = 0;
    streak_slow_.fill(0.0);
    streak_median_.fill(0.0);
    streak_median_compute_ = 0;
  }
  ++streak_;
  streak_median_compute_ += median;
  for (std::size_t p = 0; p < kPhases; ++p) {
    std::vector<double> phase;
    for (const PhaseMs& r : per_rank) phase.push_back(r[p]);
    streak_slow_[p] += per_rank[static_cast<std::size_t>(slowest)][p];
    streak_median_[p] += lower_median(phase);
  }
  if (streak_ < windows_ || warned_) return record;

  warned_ = true;
  // The streak rank's compute summed over its windows is the compute of its summed phases.
  const double percent = 100.0 * (compute_ms(streak_slow_) / streak_median_compute_ - 1.0);
  // The phases that make the difference, largest excess first: "data 2x, forward 1.1x".
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < kPhases; ++p)
    if (p != kSync && streak_slow_[p] > 0) order.push_back(p);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return streak_slow_[a] - streak_median_[a] > streak_slow_[b] - streak_median_[b];
  });
  std::string phases;
  nlohmann::json ratios = nlohmann::json::object();
  for (const std::size_t p : order) {
    if (streak_median_[p] <= 0) continue;
    const double ratio = streak_slow_[p] / streak_median_[p];
    ratios[phase_name(static_cast<int>(p))] = ratio;
    if (ratio < 1.05 || phases.size() > 40) continue;
    phases += (phases.empty() ? "" : ", ") + std::string(phase_name(static_cast<int>(p))) + " " +
              times_text(ratio);
  }
  const std::string host = static_cast<std::size_t>(slowest) < hosts_.size()
                               ? " on " + hosts_[static_cast<std::size_t>(slowest)]
                               : std::string();
  warning_ = "rank " + std::to_string(slowest) + host + " is " +
             std::to_string(static_cast<int>(std::lround(percent))) +
             "% slower than the median over the last " + std::to_string(streak_) + " windows" +
             (phases.empty() ? std::string() : ": " + phases);
  warning_record_ = {{"rank", slowest},
                     {"percent_slower", percent},
                     {"windows", streak_},
                     {"phase_ratios", ratios},
                     {"message", *warning_}};
  if (!host.empty()) warning_record_["host"] = hosts_[static_cast<std::size_t>(slowest)];
  return record;
}

nlohmann::json report_window(comm::ControlPlane& control, StragglerWatch& watch, RunLog& run_log,
                             const PhaseMs& mine, double timeout_s, std::int64_t step, int rank) {
  nlohmann::json ranks = watch.add_window(gather_phase_times(control, mine, timeout_s));
  if (watch.warning() && rank == 0) {
    run_log.end_progress_line();
    log::warn(*watch.warning(), " (--straggler-threshold ", watch.threshold(), "; said once)");
    nlohmann::json record = watch.warning_record();
    record["step"] = step;
    run_log.event("straggler", record);
  }
  return ranks;
}

}  // namespace slimtrain::train
