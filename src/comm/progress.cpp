#include "slimtrain/comm/progress.hpp"

#include <cstring>

namespace slimtrain::comm {
namespace {
std::mutex g_activity_mutex;
Activity g_activity;
}  // namespace

void Progress::set_current(std::uint64_t seq, OpKind kind, std::uint64_t bytes, const char* tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  current_.seq = seq;
  current_.kind = kind;
  current_.bytes = bytes;
  current_.tag = tag ? std::string(tag, strnlen(tag, kTagChars)) : std::string();
}

void Progress::clear_current(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (current_.seq == seq) current_ = OpSummary{};
}

OpSummary Progress::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

void set_activity(const char* what, std::int64_t step) {
  std::lock_guard<std::mutex> lock(g_activity_mutex);
  g_activity.what.assign(what ? what : "", what ? strnlen(what, kActivityChars) : 0);
  g_activity.step = step;
}

Activity current_activity() {
  std::lock_guard<std::mutex> lock(g_activity_mutex);
  return g_activity;
}

}  // namespace slimtrain::comm
