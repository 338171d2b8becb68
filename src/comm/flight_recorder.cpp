#include "slimtrain/comm/flight_recorder.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::comm {

const char* to_string(OpStatus status) {
  switch (status) {
    case OpStatus::queued:
      return "queued";
    case OpStatus::running:
      return "running";
    case OpStatus::done:
      return "done";
    case OpStatus::timed_out:
      return "timed_out";
    case OpStatus::failed:
      return "failed";
  }
  return "unknown";
}

FlightRecorder::FlightRecorder(std::size_t capacity)
    : ring_(std::max<std::size_t>(1, capacity)), origin_(std::chrono::steady_clock::now()) {}

double FlightRecorder::now_s() const {
  return seconds_since(origin_);
}

FlightEntry* FlightRecorder::find(std::uint64_t seq) {
  FlightEntry& slot = ring_[seq % ring_.size()];
  // An entry already overwritten by a newer operation is simply no longer tracked.
  return recorded_ > 0 && slot.seq == seq && slot.enqueued_s >= 0 ? &slot : nullptr;
}

void FlightRecorder::enqueued(std::uint64_t seq, std::string op, std::string dtype,
                              std::size_t bytes, std::string tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  FlightEntry& slot = ring_[seq % ring_.size()];
  slot = FlightEntry{};
  slot.seq = seq;
  slot.op = std::move(op);
  slot.dtype = std::move(dtype);
  slot.bytes = bytes;
  slot.tag = std::move(tag);
  slot.enqueued_s = now_s();
  ++recorded_;
}

void FlightRecorder::started(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightEntry* e = find(seq)) {
    e->started_s = now_s();
    if (!e->caller_timed_out) e->status = OpStatus::running;
  }
}

void FlightRecorder::ended(std::uint64_t seq, OpStatus status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightEntry* e = find(seq)) {
    e->ended_s = now_s();
    e->status = status;
  }
}

void FlightRecorder::caller_timed_out(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightEntry* e = find(seq)) {
    e->caller_timed_out = true;
    if (e->ended_s < 0) e->status = OpStatus::timed_out;
  }
}

std::vector<FlightEntry> FlightRecorder::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<FlightEntry> out;
  for (const FlightEntry& e : ring_) {
    if (e.enqueued_s >= 0) out.push_back(e);
  }
  std::sort(out.begin(), out.end(),
            [](const FlightEntry& a, const FlightEntry& b) { return a.seq < b.seq; });
  return out;
}

std::uint64_t FlightRecorder::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

namespace {

// One log line per entry, from entries already taken (the recorder's lock is not held here).
std::vector<std::string> format_lines(const std::vector<FlightEntry>& entries,
                                      const std::string& communicator) {
  std::vector<std::string> lines;
  for (const FlightEntry& e : entries) {
    char times[160];
    std::snprintf(times, sizeof times, "enqueued %.3f s, started %.3f s, ended %.3f s",
                  e.enqueued_s, e.started_s, e.ended_s);
    std::string line = "flight recorder " + communicator + " seq " + std::to_string(e.seq) + " " +
                       e.op + " " + e.dtype + " " + std::to_string(e.bytes) + " B";
    if (!e.tag.empty()) line += " [" + e.tag + "]";
    line += " " + std::string(to_string(e.status));
    if (e.caller_timed_out && e.status != OpStatus::timed_out) line += " (after caller timeout)";
    line += ": " + std::string(times);
    lines.push_back(std::move(line));
  }
  return lines;
}

struct DumpTarget {
  std::mutex mutex;
  std::string dir;
  int rank = 0;
  std::string host;
};

DumpTarget& dump_target() {
  static DumpTarget target;
  return target;
}

// Appends the entries; returns the file's path, or "" when there is no directory or it fails
// (the failure path must not throw: the job is already ending with a better error).
std::string write_entries(const std::vector<FlightEntry>& entries,
                          const std::string& communicator) {
  DumpTarget& t = dump_target();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.dir.empty()) return "";
  std::error_code ec;
  std::filesystem::create_directories(t.dir, ec);
  const std::string path = t.dir + "/rank-" + std::to_string(t.rank) + ".jsonl";
  std::ofstream out(path, std::ios::app);
  if (!out) return "";
  const double dumped_at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const FlightEntry& e : entries) {
    nlohmann::json line = {{"communicator", communicator},
                           {"rank", t.rank},
                           {"host", t.host},
                           {"dumped_at", dumped_at},
                           {"seq", e.seq},
                           {"op", e.op},
                           {"dtype", e.dtype},
                           {"bytes", e.bytes},
                           {"tag", e.tag},
                           {"status", to_string(e.status)},
                           {"caller_timed_out", e.caller_timed_out},
                           {"enqueued_s", e.enqueued_s},
                           {"started_s", e.started_s},
                           {"ended_s", e.ended_s}};
    out << line.dump() << '\n';
  }
  out.flush();
  return out ? path : "";
}

}  // namespace

std::vector<std::string> FlightRecorder::format(const std::string& communicator) const {
  return format_lines(snapshot(), communicator);
}

void set_flight_recorder_directory(const std::string& dir, int rank, const std::string& host) {
  DumpTarget& t = dump_target();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.dir = dir;
  t.rank = rank;
  t.host = host;
}

void report_flight_recorder(const FlightRecorder& recorder, const std::string& communicator,
                            std::size_t shown) {
  const std::vector<FlightEntry> entries = recorder.snapshot();
  const std::vector<std::string> lines = format_lines(entries, communicator);
  const std::string path = write_entries(entries, communicator);
  const std::size_t from = lines.size() > shown ? lines.size() - shown : 0;
  log::warn("flight recorder ", communicator, ": the last ", lines.size() - from, " of ",
            recorder.recorded(), " operations",
            path.empty() ? std::string(" (no run directory to write the rest to)")
                         : " (the last " + std::to_string(entries.size()) + " in " + path + ")");
  for (std::size_t i = from; i < lines.size(); ++i) log::warn("  ", lines[i]);
}

}  // namespace slimtrain::comm
