#include "slimtrain/comm/flight_recorder.hpp"

#include <algorithm>
#include <cstdio>

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
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
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

std::vector<std::string> FlightRecorder::format(const std::string& communicator) const {
  std::vector<std::string> lines;
  for (const FlightEntry& e : snapshot()) {
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

}  // namespace slimtrain::comm
