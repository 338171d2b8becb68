#include "slimtrain/core/fault_injection.hpp"

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain {
namespace {

double parse_seconds(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: delay '", text,
                    "' is not a duration like 8s or 500ms");
  }
  const std::string unit = text.substr(used);
  if (unit.empty() || unit == "s") return value;
  if (unit == "ms") return value / 1000.0;
  if (unit == "m" || unit == "min") return value * 60.0;
  SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: delay '", text,
                  "' has an unknown unit (s, ms, m)");
}

std::int64_t parse_int(const std::string& key, const std::string& text) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: ", key, "='", text,
                  "' is not a non-negative integer");
}

}  // namespace

FaultPlan FaultPlan::parse(const std::string& spec) {
  FaultPlan plan;
  std::istringstream fields(spec);
  std::string field;
  bool action_given = false;
  while (std::getline(fields, field, ',')) {
    if (field.empty()) continue;
    const auto eq = field.find('=');
    if (eq == std::string::npos)
      SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: '", field, "' is not key=value");
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "rank") {
      plan.rank = static_cast<int>(parse_int(key, value));
    } else if (key == "step") {
      plan.step = parse_int(key, value);
    } else if (key == "phase") {
      if (value == "train")
        plan.phase = FaultPhase::train;
      else if (value == "eval")
        plan.phase = FaultPhase::eval;
      else if (value == "prep")
        plan.phase = FaultPhase::prep;
      else if (value == "checkpoint")
        plan.phase = FaultPhase::checkpoint;
      else if (value == "log")
        plan.phase = FaultPhase::log;
      else if (value == "read")
        plan.phase = FaultPhase::read;
      else if (value == "copy")
        plan.phase = FaultPhase::copy;
      else
        SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: phase='", value,
                        "' (train, eval, prep, checkpoint, log, read or copy)");
    } else if (key == "action") {
      action_given = true;
      if (value == "delay")
        plan.action = FaultAction::delay;
      else if (value == "hang")
        plan.action = FaultAction::hang;
      else if (value == "exit")
        plan.action = FaultAction::exit;
      else if (value == "throw")
        plan.action = FaultAction::fail;
      else if (value == "desync")
        plan.action = FaultAction::desync;
      else if (value == "slow")
        plan.action = FaultAction::slow;
      else if (value == "nan")
        plan.action = FaultAction::nan;
      else if (value == "full")
        plan.action = FaultAction::full;
      else
        SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: action='", value,
                        "' (delay, hang, exit, throw, desync, slow, nan or full)");
    } else if (key == "delay") {
      plan.delay_s = parse_seconds(value);
    } else if (key == "bytes") {
      plan.desync_bytes = parse_int(key, value);
      if (plan.desync_bytes < 8)
        SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: bytes='", value, "' must be at least 8");
    } else if (key == "times") {
      plan.times = parse_int(key, value);
      if (plan.times < 1)
        SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: times='", value, "' must be at least 1");
    } else {
      SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT: unknown key '", key,
                      "' (rank, phase, step, action, delay, times, bytes)");
    }
  }
  if (plan.rank < 0 || plan.phase == FaultPhase::none || plan.step < 0)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec, "' needs rank=, phase= and step=");
  if (!action_given && plan.delay_s <= 0)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec,
                    "' needs delay= or action=hang|exit|throw|desync|slow|nan|full");
  if (plan.action == FaultAction::desync && plan.phase != FaultPhase::train)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec, "': action=desync needs phase=train");
  if (plan.action == FaultAction::nan && plan.phase != FaultPhase::train)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec, "': action=nan needs phase=train");
  if (plan.action == FaultAction::slow && (plan.phase != FaultPhase::train || plan.delay_s <= 0))
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec,
                    "': action=slow needs phase=train and delay=D");
  if (plan.action == FaultAction::full && plan.phase != FaultPhase::checkpoint &&
      plan.phase != FaultPhase::log)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec,
                    "': action=full needs phase=checkpoint or phase=log");
  if (plan.phase == FaultPhase::log && plan.action != FaultAction::full)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec, "': phase=log takes action=full");
  if (plan.phase == FaultPhase::copy && plan.action != FaultAction::delay)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec, "': phase=copy takes delay=D");
  if (plan.phase == FaultPhase::read && plan.action != FaultAction::hang &&
      plan.action != FaultAction::delay)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec,
                    "': phase=read takes action=hang or delay=D");
  // A checkpoint write that hangs times=N: the next writes get through (a file system back).
  const bool hung_writes = plan.action == FaultAction::hang && plan.phase == FaultPhase::checkpoint;
  if (plan.times > 0 && plan.action != FaultAction::delay && plan.action != FaultAction::full &&
      !hung_writes)
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_INJECT='", spec,
                    "': times= applies to delays, action=full and checkpoint hangs only");
  return plan;
}

FaultPlan FaultPlan::from_env() {
  const char* spec = std::getenv("SLIMTRAIN_INJECT");
  return spec && *spec ? parse(spec) : FaultPlan{};
}

bool FaultPlan::armed(int at_rank, FaultPhase at_phase, std::int64_t at_step) const {
  if (phase == FaultPhase::none || at_rank != rank || at_phase != phase) return false;
  if (times >= 0 && fired >= times) return false;
  // A hang persists: once the rank stops arriving, it never arrives again; a straggler stays slow.
  const bool persists =
      action == FaultAction::hang || action == FaultAction::slow || action == FaultAction::full;
  return persists ? at_step >= step : at_step == step;
}

void FaultPlan::fire() {
  ++fired;
  if (action != FaultAction::slow || fired == 1)
    log::warn("fault injection (SLIMTRAIN_INJECT, test only): ", describe());
  switch (action) {
    case FaultAction::slow:
    case FaultAction::delay:
      std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
      return;
    case FaultAction::hang:
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    case FaultAction::exit:
      std::_Exit(13);
    case FaultAction::fail:
      SLIMTRAIN_THROW(DataError, "SLIMTRAIN_INJECT: injected data error at step ", step,
                      " (as a corrupt row in the stream reader would raise)");
    case FaultAction::full:
      SLIMTRAIN_THROW(Error,
                      "No space left on device (SLIMTRAIN_INJECT: a full disk under the "
                      "checkpoint write from step ",
                      step, ")");
    case FaultAction::desync:
    case FaultAction::nan:
      return;  // the trainer issues the extra operation, or makes the step's loss NaN
  }
}

std::string FaultPlan::describe() const {
  std::ostringstream out;
  const char* phase_name = phase == FaultPhase::train        ? "train"
                           : phase == FaultPhase::eval       ? "eval"
                           : phase == FaultPhase::checkpoint ? "checkpoint"
                           : phase == FaultPhase::log        ? "log"
                           : phase == FaultPhase::read       ? "read"
                           : phase == FaultPhase::copy       ? "copy"
                                                             : "prep";
  const char* action_name = action == FaultAction::delay  ? "delay"
                            : action == FaultAction::hang ? "hang"
                            : action == FaultAction::exit ? "exit"
                            : action == FaultAction::fail ? "throw"
                            : action == FaultAction::slow ? "slow"
                            : action == FaultAction::nan  ? "nan"
                            : action == FaultAction::full ? "full"
                                                          : "desync";
  out << "rank=" << rank << " phase=" << phase_name << " step=" << step
      << " action=" << action_name;
  if (action == FaultAction::delay || action == FaultAction::slow)
    out << " delay=" << delay_s << "s";
  if (action == FaultAction::desync) out << " bytes=" << desync_bytes;
  if (times >= 0) out << " times=" << times;
  return out.str();
}

}  // namespace slimtrain
