#include "slimtrain/report/html_report.hpp"

#include <ctime>
#include <map>
#include <sstream>

#include "slimtrain/core/detail/fixed.hpp"
#include "slimtrain/report/svg_chart.hpp"

namespace slimtrain::report {
namespace {

using nlohmann::json;

const char* kStyle =
    R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.state-done{color:#2a7d2a}.state-failed{color:#c0392b;font-weight:bold}.bad{background:#fde2e0}
svg.chart{display:block;margin:8px 0;background:#fff}svg .title{font-weight:bold;font-size:13px}
svg .tick,svg .legend,svg .axis,svg .mark,svg .count{font-size:11px}svg .grid{stroke:#eee}
svg .frame{fill:none;stroke:#999}svg .empty{fill:#999}.muted{color:#777}code{font-size:12px})";

ChartFrame frame(std::string title, std::string y_label, bool from_zero = false) {
  ChartFrame f;
  f.title = std::move(title);
  f.y_label = std::move(y_label);
  f.y_from_zero = from_zero;
  return f;
}

// A member or nullptr: a const json's operator[] on a missing key is undefined behaviour, and a
// report must read runs from older versions and runs cut short.
const json* field(const json* e, const char* key) {
  return e && e->is_object() && e->contains(key) ? &(*e)[key] : nullptr;
}

std::string number(const json* v, int decimals) {
  return v && v->is_number() ? detail::fixed(v->get<double>(), decimals) : "–";
}

std::string clock_text(const json& e) {
  if (!e.contains("time") || !e["time"].is_number()) return "";
  const std::time_t t = static_cast<std::time_t>(e["time"].get<double>());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

struct Happening {
  double step;
  std::string kind, detail, color;
};

// Events worth a mark on the timeline, with their reasons.
std::vector<Happening> happenings(const RunData& run) {
  std::vector<Happening> out;
  for (const json& e : run.events) {
    const std::string name = e.value("event", "");
    const double step = e.value("step", 0.0);
    if (name == "start" && e.value("resumed_at_step", 0) > 0)
      out.push_back(
          {e.value("resumed_at_step", 0.0), "resume",
           "resumed from the checkpoint of step " + std::to_string(e.value("resumed_at_step", 0)),
           "#2ca02c"});
    else if (name == "eval_skipped")
      out.push_back(
          {step, "skip", e.value("reason", std::string("evaluation skipped")), "#ff7f0e"});
    else if (name == "checkpoint")
      out.push_back(
          {step, "ckpt", "checkpoint of step " + std::to_string(e.value("step", 0)), "#7f7f7f"});
    else if (name == "stopped")
      out.push_back({step, "stop",
                     "stopped by a signal after a checkpoint (exit " +
                         std::to_string(e.value("exit_code", 0)) + ", requeue)",
                     "#9467bd"});
    else if (name == "failed")
      out.push_back({step, "failed", e.value("reason", std::string("failed")), "#c0392b"});
    else if (name == "straggler")
      out.push_back({step, "slow", e.value("message", std::string("straggler")), "#8c564b"});
  }
  return out;
}

std::vector<Marker> markers(const std::vector<RunData>& runs) {
  std::vector<Marker> out;
  for (const RunData& run : runs) {
    const auto list = happenings(run);
    std::size_t checkpoints = 0;
    for (const auto& h : list) checkpoints += h.kind == "ckpt";
    for (const auto& h : list) {
      if (h.kind == "ckpt" && checkpoints > 12) continue;  // many: listed in the table only
      const std::string who = runs.size() > 1 ? run.name + ": " : "";
      out.push_back({h.step, h.kind,
                     who + h.kind + " at step " + detail::fixed(h.step, 0) + ": " + h.detail,
                     h.color});
    }
  }
  return out;
}

Series overlay(const RunData& run, std::size_t index, Points points, const std::string& what,
               bool dashed = false) {
  Series s;
  s.name = what.empty() ? run.name : run.name + " " + what;
  s.color = palette(index);
  s.points = std::move(points);
  s.dashed = dashed;
  return s;
}

void summary_table(std::ostringstream& out, const std::vector<RunData>& runs) {
  out << "<table><tr><th>run</th><th>state</th><th>ranks</th><th>model</th><th>steps</th>"
         "<th>final accuracy</th><th>macro-F1</th><th>samples/s</th><th>launches</th></tr>\n";
  for (const RunData& run : runs) {
    const json* start = run.last("start");
    const json* done = run.last("done");
    const json* train = run.last("train");
    const json* final_metrics = field(done, "final");
    std::string model = "–", ranks = "–", total = "?";
    if (start) {
      model = start->contains("model") ? (*start)["model"].value("name", std::string("?")) : "?";
      if (model == "torchscript")
        model += ":" + (*start)["model"].value("script_path", std::string());
      ranks = std::to_string(start->value("world_size", 0));
      total = std::to_string(start->value("total_steps", 0));
    }
    const std::string state = run.state();
    out << "<tr><td>" << escape(run.name) << "</td><td class=\"state-"
        << (state.rfind("failed", 0) == 0 ? "failed"
            : state == "done"             ? "done"
                                          : "other")
        << "\">" << escape(state) << "</td><td class=\"n\">" << ranks << "</td><td>"
        << escape(model) << "</td><td class=\"n\">"
        << (train ? std::to_string(train->value("step", 0)) : "0") << " / " << total
        << "</td><td class=\"n\">" << number(field(final_metrics, "accuracy"), 4)
        << "</td><td class=\"n\">" << number(field(final_metrics, "macro_f1"), 4)
        << "</td><td class=\"n\">" << number(field(done, "samples_per_s"), 0)
        << "</td><td class=\"n\">" << run.all("start").size() << "</td></tr>\n";
  }
  out << "</table>\n";
}

void timeline_table(std::ostringstream& out, const RunData& run) {
  out << "<table class=\"timeline\"><tr><th>time (UTC)</th><th>step</th><th>event</th>"
         "<th>detail</th></tr>\n";
  for (const json& e : run.events) {
    const std::string name = e.value("event", "");
    std::string detail;
    if (name == "start")
      detail = e.value("resumed_at_step", 0) > 0
                   ? "resumed at step " + std::to_string(e.value("resumed_at_step", 0))
                   : "started: " + std::to_string(e.value("world_size", 0)) + " ranks, " +
                         e.value("device", std::string());
    else if (name == "eval")
      detail = e.value("split", std::string()) + ": accuracy " + number(field(&e, "accuracy"), 4) +
               ", macro-F1 " + number(field(&e, "macro_f1"), 4);
    else if (name == "eval_skipped" || name == "failed")
      detail = e.value("reason", std::string());
    else if (name == "checkpoint")
      detail = "blocking " + number(field(&e, "blocking_ms"), 1) + " ms";
    else if (name == "straggler")
      detail = e.value("message", std::string());
    else if (name == "stopped")
      detail = "exit " + std::to_string(e.value("exit_code", 0)) + " for requeue";
    else if (name == "done")
      detail = "finished";
    else
      continue;  // train lines are the curves
    const bool bad = name == "failed" || name == "eval_skipped" || name == "straggler";
    out << "<tr" << (bad ? " class=\"bad\"" : "") << "><td>" << clock_text(e)
        << "</td><td class=\"n\">" << e.value("step", e.value("resumed_at_step", 0)) << "</td><td>"
        << escape(name) << "</td><td>" << escape(detail) << "</td></tr>\n";
  }
  out << "</table>\n";
}

void per_rank(std::ostringstream& out, const RunData& run) {
  std::vector<Series> ranks;
  for (const json* e : run.all("train")) {
    if (!e->contains("ranks") || !(*e)["ranks"].contains("compute_ms")) continue;
    const auto& ms = (*e)["ranks"]["compute_ms"];
    for (std::size_t r = 0; r < ms.size() && r < 16; ++r) {
      if (ranks.size() <= r) ranks.push_back({"rank " + std::to_string(r), palette(r), {}, false});
      ranks[r].points.emplace_back(e->value("step", 0.0), ms[r].get<double>());
    }
  }
  if (ranks.empty()) {
    out << "<p class=\"muted\">" << escape(run.name)
        << ": no per-rank times (one rank, or a run from before they were recorded).</p>\n";
    return;
  }
  const ChartFrame f =
      frame(run.name + ": compute time per rank (data + forward + backward + optimizer)",
            "ms per step", true);
  std::vector<Marker> slow;
  for (const auto& h : happenings(run))
    if (h.kind == "slow") slow.push_back({h.step, "slow", h.detail, h.color});
  out << line_chart(f, ranks, slow);
}

void final_metrics(std::ostringstream& out, const RunData& run) {
  const json* done = run.last("done");
  const json* m = field(done, "final");  // null when the final evaluation was skipped
  if (m && !m->is_object()) m = nullptr;
  if (!m) {
    out << "<p class=\"muted\">" << escape(run.name) << ": no final evaluation yet.</p>\n";
    return;
  }
  out << "<h3>" << escape(run.name) << ": final evaluation on '"
      << escape(done->value("final_split", std::string("?"))) << "' (" << m->value("count", 0)
      << " samples): accuracy " << number(field(m, "accuracy"), 4) << ", macro-F1 "
      << number(field(m, "macro_f1"), 4) << "</h3>\n<table><tr><th>class</th><th>precision</th>"
      << "<th>recall</th><th>F1</th><th>support</th></tr>\n";
  std::vector<std::string> names;
  const json classes = m->value("per_class", json::array());
  for (const json& c : classes) {
    names.push_back(c.value("name", std::string()));
    out << "<tr><td>" << escape(names.back()) << "</td><td class=\"n\">"
        << number(field(&c, "precision"), 4) << "</td><td class=\"n\">"
        << number(field(&c, "recall"), 4) << "</td><td class=\"n\">" << number(field(&c, "f1"), 4)
        << "</td><td class=\"n\">" << c.value("support", 0) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (m->contains("confusion") && (*m)["confusion"].is_array())  // sparse above 100 classes
    out << heatmap(run.name + ": confusion matrix",
                   (*m)["confusion"].get<std::vector<std::vector<long long>>>(), names);
}

void configuration(std::ostringstream& out, const RunData& run) {
  const json* start = run.last("start");
  if (!start) return;
  out << "<h3>" << escape(run.name) << "</h3>\n<table><tr><th>option</th><th>value</th></tr>\n";
  const json settings = start->value("config", json::object());  // items() needs it alive
  for (const auto& [key, value] : settings.items())
    out << "<tr><td>" << escape(key) << "</td><td><code>"
        << escape(value.is_string() ? value.get<std::string>() : value.dump())
        << "</code></td></tr>\n";
  out << "</table>\n<p>model: <code>" << escape((*start).value("model", json::object()).dump())
      << "</code>, " << start->value("parameters", 0) << " parameters ("
      << start->value("trainable_parameters", 0) << " trainable); device "
      << escape(start->value("device", std::string())) << "; placement <code>"
      << escape(start->value("placement", json::array()).dump()) << "</code></p>\n";
}

void recorder(std::ostringstream& out, const RunData& run) {
  if (run.recorder.empty()) return;
  out << "<h3>" << escape(run.name) << ": flight recorder (" << run.recorder.size()
      << " operations over all ranks, from " << escape(run.dir)
      << "/flight_recorder/)</h3>\n<table><tr><th>rank</th><th>host</th><th>communicator</th>"
         "<th>seq</th><th>operation</th><th>bytes</th><th>tag</th><th>status</th>"
         "<th>enqueued s</th><th>ended s</th></tr>\n";
  // The last 12 operations of each rank and communicator: where each one stopped.
  std::map<std::pair<int, std::string>, std::vector<const json*>> groups;
  for (const json& e : run.recorder)
    groups[{e.value("rank", -1), e.value("communicator", std::string())}].push_back(&e);
  for (const auto& [key, lines] : groups) {
    for (std::size_t i = lines.size() > 12 ? lines.size() - 12 : 0; i < lines.size(); ++i) {
      const json& e = *lines[i];
      const std::string status = e.value("status", std::string());
      out << "<tr" << (status == "timed_out" || status == "failed" ? " class=\"bad\"" : "")
          << "><td class=\"n\">" << key.first << "</td><td>"
          << escape(e.value("host", std::string())) << "</td><td>" << escape(key.second)
          << "</td><td class=\"n\">" << e.value("seq", 0) << "</td><td>"
          << escape(e.value("op", std::string())) << "</td><td class=\"n\">" << e.value("bytes", 0)
          << "</td><td>" << escape(e.value("tag", std::string())) << "</td><td>" << escape(status)
          << "</td><td class=\"n\">" << number(field(&e, "enqueued_s"), 3)
          << "</td><td class=\"n\">" << number(field(&e, "ended_s"), 3) << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

}  // namespace

std::string render_report(const std::vector<RunData>& runs) {
  std::ostringstream out;
  std::string names;
  for (const RunData& r : runs) names += (names.empty() ? "" : ", ") + r.name;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>slimtrain "
         "report: "
      << escape(names) << "</title>\n<style>" << kStyle << "</style></head><body>\n"
      << "<h1>slimtrain report: " << escape(names) << "</h1>\n";
  summary_table(out, runs);
  for (const RunData& r : runs)
    if (r.partial_tail)
      out << "<p class=\"muted\">" << escape(r.name)
          << ": the last line of metrics.jsonl is still being written; left out.</p>\n";

  const std::vector<Marker> marks = markers(runs);
  std::vector<Series> loss, lr, accuracy, rate;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    loss.push_back(overlay(runs[i], i, runs[i].series("train", "loss"), ""));
    lr.push_back(overlay(runs[i], i, runs[i].series("train", "lr"), ""));
    rate.push_back(overlay(runs[i], i, runs[i].series("train", "samples_per_s"), ""));
    accuracy.push_back(overlay(runs[i], i, runs[i].series("eval", "accuracy"), "accuracy"));
    accuracy.push_back(overlay(runs[i], i, runs[i].series("eval", "macro_f1"), "macro-F1", true));
  }
  out << "<h2>Training</h2>\n"
      << line_chart(frame("training loss (mean over ranks)", "loss"), loss, marks)
      << line_chart(frame("learning rate", "lr"), lr) << "<h2>Evaluation</h2>\n"
      << line_chart(frame("evaluation accuracy (solid) and macro-F1 (dashed)", "score"), accuracy,
                    marks)
      << "<h2>Throughput and where a step's time goes</h2>\n"
      << line_chart(frame("samples per second (all ranks)", "samples/s", true), rate, marks);
  const char* phases[] = {"data", "forward", "backward", "sync", "optimizer"};
  for (const RunData& run : runs) {
    std::vector<Series> layers;
    for (std::size_t p = 0; p < 5; ++p)
      layers.push_back(
          {phases[p], palette(p), run.series("train", std::string("step_ms/") + phases[p]), false});
    out << stacked_chart(
        {run.name + ": step time by phase (rank 0; its sync includes waiting for the others)",
         "step", "ms per step"},
        layers);
  }
  out << "<h2>Per-rank step times</h2>\n";
  for (const RunData& run : runs) per_rank(out, run);
  out << "<h2>Timeline</h2>\n";
  for (const RunData& run : runs) {
    if (runs.size() > 1) out << "<h3>" << escape(run.name) << "</h3>\n";
    timeline_table(out, run);
  }
  out << "<h2>Final evaluation</h2>\n";
  for (const RunData& run : runs) final_metrics(out, run);
  bool any_recorder = false;
  for (const RunData& run : runs) any_recorder = any_recorder || !run.recorder.empty();
  if (any_recorder) {
    out << "<h2>Failure: flight recorders</h2>\n";
    for (const RunData& run : runs) recorder(out, run);
  }
  out << "<h2>Configuration and model</h2>\n";
  for (const RunData& run : runs) configuration(out, run);
  out << "<p class=\"muted\">Written by slimtrain report from " << escape(names)
      << "; self-contained: nothing is fetched.</p>\n</body></html>\n";
  return out.str();
}

}  // namespace slimtrain::report
