#include "slimtrain/report/summary.hpp"

#include <cstdio>
#include <sstream>

#include "slimtrain/core/detail/fixed.hpp"

namespace slimtrain::report {
namespace {

using nlohmann::json;

std::string duration_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  return text;
}

std::string fixed(const json& v, int decimals) {
  return v.is_number() ? detail::fixed(v.get<double>(), decimals) : "-";
}

}  // namespace

std::string summary_text(const RunData& run, const std::string& report_path,
                         const std::string& program) {
  std::ostringstream out;
  const auto starts = run.all("start");
  const json* first = starts.empty() ? nullptr : starts.front();
  const json* start = run.last("start");
  const json* done = run.last("done");
  const json* train = run.last("train");
  const std::string state = run.state();
  out << "run " << run.dir << ": " << state;
  if (first && !run.events.empty())
    out << " after "
        << duration_text(run.events.back().value("time", 0.0) - first->value("time", 0.0));
  if (start) {
    const json model = start->value("model", json::object());
    out << " (" << start->value("world_size", 0) << " ranks, "
        << model.value("name", std::string("?")) << ", step "
        << (train ? train->value("step", 0) : 0) << " of " << start->value("total_steps", 0) << ")";
  }
  out << "\n";
  if (done && done->contains("final") && (*done)["final"].is_object()) {
    const json& f = (*done)["final"];
    out << "  " << done->value("final_split", std::string("final")) << " accuracy "
        << fixed(f.value("accuracy", json()), 4) << ", macro-F1 "
        << fixed(f.value("macro_f1", json()), 4) << " (" << f.value("count", 0) << " samples); "
        << fixed(done->value("samples_per_s", json()), 0) << " samples/s\n";
  } else if (const json* failed = run.last("failed")) {
    out << "  failed at step " << failed->value("step", 0) << ": "
        << failed->value("reason", std::string()) << "\n";
  }
  const json* ckpt = run.last("checkpoint");
  const std::string checkpoint =
      done && (*done)["checkpoint"].is_string() ? (*done)["checkpoint"].get<std::string>()
      : ckpt ? run.dir + "/checkpoints (step " + std::to_string(ckpt->value("step", 0)) + ")"
             : "none yet";
  out << "  run directory " << run.dir << "\n  checkpoint    " << checkpoint << "\n  report        "
      << report_path << "\n";
  const json settings = start ? start->value("config", json::object()) : json::object();
  const std::string data = settings.value("data", std::string("DATA.h5"));
  const std::string ranks = start ? std::to_string(start->value("world_size", 1)) : "N";
  out << "next:\n"
      << "  " << program << " eval --checkpoint " << run.dir << " --data " << data
      << " --split test\n"
      << "  " << program << " export --checkpoint " << run.dir << " -o weights.h5\n"
      << "  mpirun -np " << ranks << " " << program << " train"
      << (settings.contains("config") ? " --config " + settings.value("config", std::string())
                                      : std::string())
      << " --data " << data << " --out " << run.dir
      << "   # after a stop or a failure, the same command resumes from the last checkpoint\n";
  return out.str();
}

}  // namespace slimtrain::report
