#pragma once
/**
 * @brief Stragglers named: once per log window every rank's step-phase times travel on the
 * control plane (one small all-gather, never per step), the train event records the slowest rank
 * against the median, and a rank that stays more than a set fraction slower than the median for
 * several windows in a row is named once, with the phases that make the difference:
 * "rank 3 on node2 is 38% slower than the median over the last 3 windows: data 2x, forward 1.1x".
 *
 * A rank's time here is its compute (data, forward, backward, optimizer), not its sync: the
 * others' sync is where they wait for the straggler. The median of an even count is the lower
 * middle one, so on 2 ranks the slow rank is compared with the other, not with their average.
 */
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/train/step_timer.hpp"

namespace slimtrain::train {

using PhaseMs = std::array<double, kPhases>;  ///< ms per step in each phase, over one window

/** @brief Data + forward + backward + optimizer: what a rank spends on its own. */
double compute_ms(const PhaseMs& phases);

/** @brief Every rank's PhaseMs, in rank order (all ranks call it at the same log step). */
std::vector<PhaseMs> gather_phase_times(comm::ControlPlane& control, const PhaseMs& mine,
                                        double timeout_s);

class StragglerWatch;
class RunLog;

/**
 * @brief At a log step, on every rank: every rank's window times (one all-gather) and, on rank 0,
 * a straggler warning and event named once; returns the train event's "ranks" record.
 */
nlohmann::json report_window(comm::ControlPlane& control, StragglerWatch& watch, RunLog& run_log,
                             const PhaseMs& mine, double timeout_s, std::int64_t step, int rank);

class StragglerWatch {
 public:
  /**
   * @param threshold warn when a rank's compute exceeds the median's by more than this fraction
   * (0.25: 25% slower); 0 turns the warning off (the train event still records the slowest).
   * @param windows consecutive log windows the same rank must stay that slow.
   */
  StragglerWatch(double threshold, int windows, std::vector<std::string> hosts);

  /**
   * @brief One window's times, every rank's. Returns the train event's "ranks" record; sets
   * warning() the first time a straggler is established (and never again).
   */
  nlohmann::json add_window(const std::vector<PhaseMs>& per_rank);
  /** @brief The warning of the last add_window, if it made one. */
  const std::optional<std::string>& warning() const { return warning_; }
  /** @brief The straggler named by warning(): rank, its slowdown, the windows. */
  const nlohmann::json& warning_record() const { return warning_record_; }
  double threshold() const { return threshold_; }

 private:
  double threshold_;
  int windows_;
  std::vector<std::string> hosts_;
  int streak_rank_ = -1;
  int streak_ = 0;
  PhaseMs streak_slow_{};    ///< the streak rank's phases, summed over the streak's windows
  PhaseMs streak_median_{};  ///< each phase's median over ranks, summed likewise
  double streak_median_compute_ = 0;  ///< the median compute, summed over the streak's windows
  bool warned_ = false;
  std::optional<std::string> warning_;
  nlohmann::json warning_record_;
};

}  // namespace slimtrain::train
