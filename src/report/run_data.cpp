#include "slimtrain/report/run_data.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "slimtrain/core/error.hpp"

namespace slimtrain::report {
namespace fs = std::filesystem;
namespace {

// Every line of a JSON-lines file; an incomplete last line (no newline, or not parseable) is
// dropped and reported through `partial`, a bad line elsewhere is an error naming it.
std::vector<nlohmann::json> read_lines(const fs::path& path, bool* partial) {
  std::ifstream in(path, std::ios::binary);
  if (!in) SLIMTRAIN_THROW(DataError, path.string(), ": cannot be read");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<nlohmann::json> out;
  std::size_t at = 0, number = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const bool last = end == std::string::npos || end + 1 >= text.size();
    const std::string line =
        text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    ++number;
    at = end == std::string::npos ? text.size() : end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      nlohmann::json value = nlohmann::json::parse(line);
      if (!value.is_object()) throw std::invalid_argument("not an object");
      if (end == std::string::npos) {  // still being written: not yet a whole line
        if (partial) *partial = true;
        continue;
      }
      out.push_back(std::move(value));
    } catch (const std::exception& e) {
      if (last) {
        if (partial) *partial = true;
        continue;
      }
      SLIMTRAIN_THROW(DataError, path.string(), ":", number, ": not a JSON object (", e.what(),
                      ")");
    }
  }
  return out;
}

const nlohmann::json* find_path(const nlohmann::json& e, const std::string& path) {
  const nlohmann::json* at = &e;
  std::size_t from = 0;
  while (true) {
    const std::size_t slash = path.find('/', from);
    const std::string key = path.substr(from, slash == std::string::npos ? slash : slash - from);
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    if (slash == std::string::npos) return at;
    from = slash + 1;
  }
}

}  // namespace

std::string RunData::state() const {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    const std::string name = it->value("event", "");
    if (name == "done") return "done";
    if (name == "failed") return "failed";
    if (name == "stopped") return "stopped for requeue";
    if (name == "start") break;  // the latest launch has not ended (yet)
  }
  return recorder.empty() ? "running (or ended without a record)"
                          : "failed (flight recorder written)";
}

std::vector<const nlohmann::json*> RunData::all(const std::string& name) const {
  std::vector<const nlohmann::json*> out;
  for (const auto& e : events)
    if (e.value("event", "") == name) out.push_back(&e);
  return out;
}

const nlohmann::json* RunData::last(const std::string& name) const {
  for (auto it = events.rbegin(); it != events.rend(); ++it)
    if (it->value("event", "") == name) return &*it;
  return nullptr;
}

Points RunData::series(const std::string& name, const std::string& field) const {
  std::map<double, double> by_step;
  for (const nlohmann::json* e : all(name)) {
    const nlohmann::json* step = find_path(*e, "step");
    const nlohmann::json* value = find_path(*e, field);
    if (step && value && step->is_number() && value->is_number())
      by_step[step->get<double>()] = value->get<double>();
  }
  return Points(by_step.begin(), by_step.end());
}

RunData load_run(const std::string& dir) {
  RunData run;
  run.dir = dir;
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    SLIMTRAIN_THROW(DataError, "report: run directory '", dir, "' does not exist");
  run.name = fs::absolute(root, ec).lexically_normal().filename().string();
  if (run.name.empty())
    run.name = fs::absolute(root, ec).lexically_normal().parent_path().filename().string();
  const fs::path metrics = root / "metrics.jsonl";
  if (!fs::exists(metrics, ec))
    SLIMTRAIN_THROW(DataError, "report: ", metrics.string(), " not found: is '", dir,
                    "' a run directory of 'slimtrain train --out'?");
  run.events = read_lines(metrics, &run.partial_tail);
  const fs::path recorders = root / "flight_recorder";
  if (fs::is_directory(recorders, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(recorders, ec))
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      for (auto& line : read_lines(f, nullptr)) run.recorder.push_back(std::move(line));
  }
  return run;
}

}  // namespace slimtrain::report
