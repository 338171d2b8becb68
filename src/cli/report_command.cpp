#include <filesystem>
#include <fstream>
#include <iostream>

#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/report/html_report.hpp"
#include "slimtrain/report/summary.hpp"

namespace slimtrain::cli {

int run_report(const std::vector<std::string>& args) {
  CommandLine cl(
      "report", "slimtrain report RUN_DIR [RUN_DIR...] [-o report.html]",
      "Writes one self-contained HTML file (inline SVG; no script, font or style fetched) of\n"
      "training runs: loss and learning rate, evaluation accuracy and macro-F1, samples/s and\n"
      "the step-time breakdown, per-rank step times, skipped evaluations, checkpoints, stops,\n"
      "resumes, stragglers and failures on the timeline with their reasons, the final per-class\n"
      "table and confusion matrix, the configuration, and a failed run's flight recorders.\n"
      "Several run directories overlay their curves. It reads a run that is still going.\n"
      "It also prints a short summary of each run: result, time, where things are, what next.");
  std::string output;
  // clang-format off
  cl.add()
      ("run", po::value<std::vector<std::string>>()->multitoken(), "run directories (positional): each has metrics.jsonl from 'slimtrain train --out'")
      ("output,o", po::value(&output), "the HTML file to write (default: the first RUN_DIR/report.html)");
  // clang-format on
  cl.positional().add("run", -1);
  cl.set_epilog(
      "example:\n  slimtrain report runs/demo && chromium runs/demo/report.html\n"
      "  slimtrain report runs/a runs/b -o compare.html\n"
      "exit codes: 0 written, 2 a missing run directory, metrics.jsonl or bad line (named)");
  if (!cl.parse(args)) return kExitOk;
  if (!cl.has("run")) SLIMTRAIN_THROW(ConfigError, "report: give at least one run directory");
  std::vector<report::RunData> runs;
  for (const std::string& dir : cl.get<std::vector<std::string>>("run"))
    runs.push_back(report::load_run(dir));
  if (output.empty()) output = runs.front().dir + "/report.html";
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(output);
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    SLIMTRAIN_THROW(ConfigError, "-o ", output, ": the directory '", parent.string(),
                    "' does not exist");
  std::string html;
  try {
    html = report::render_report(runs);
  } catch (const nlohmann::json::exception& e) {
    // A field of an unexpected type (a hand-edited or foreign metrics.jsonl).
    std::string dirs;
    for (const auto& run : runs) dirs += (dirs.empty() ? "" : ", ") + run.dir + "/metrics.jsonl";
    SLIMTRAIN_THROW(DataError, "report: ", dirs, ": a field of an unexpected type (", e.what(),
                    ")");
  }
  // A reader (a browser reloading a live run's report) never sees half a file; the report of
  // a run is remade as it goes, so an existing one is replaced.
  files::write_file_atomically(output, /*force=*/true, "-o", [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << html;
    if (!out.flush()) SLIMTRAIN_THROW(ConfigError, "-o ", output, ": cannot write '", tmp, "'");
  });
  // A few lines per run for the terminal; everything else is in the report and metrics.jsonl.
  for (const report::RunData& run : runs)
    std::cout << report::summary_text(run, output, program_command());
  return kExitOk;
}

}  // namespace slimtrain::cli
