#include "slimtrain/comm/stall_report.hpp"

#include <algorithm>

namespace slimtrain::comm {
namespace {

// "evaluation at step 8, running all_reduce #3 of 816 bytes [eval-stats] on eval"
std::string doing_now(const PeerProgress& p) {
  std::string out;
  if (!p.activity.empty()) {
    out = p.activity;
    if (p.activity_step >= 0) out += " at step " + std::to_string(p.activity_step);
  }
  std::string op;
  if (p.current.seq != 0)
    op = "running " + p.current.describe();
  else if (!p.busy_comm.empty())
    op = "running " + p.busy.describe() + " on " + p.busy_comm;
  else
    op = "in no collective";
  return out.empty() ? op : out + ", " + op;
}

}  // namespace

std::string with_thousands(std::uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

std::string OpSummary::describe() const {
  std::string out = std::string(to_string(kind)) + " #" + std::to_string(seq) + " of " +
                    with_thousands(bytes) + " bytes";
  if (!tag.empty()) out += " [" + tag + "]";
  return out;
}

StallReport analyse_stall(const OpSummary& mine, const std::vector<PeerProgress>& peers) {
  StallReport report;
  auto add = [&report](const PeerProgress& p, const std::string& why) {
    report.missing.push_back(p.rank);
    if (!report.description.empty()) report.description += ", ";
    report.description += std::to_string(p.rank);
    if (!p.host.empty()) report.description += " on " + p.host;
    report.description += " (" + why + ")";
  };
  const std::uint64_t seq = mine.seq;
  for (const PeerProgress& p : peers) {
    if (!p.answered) {
      add(p, "no answer");
    } else if (!p.known) {
      add(p, "has no such communicator");
    } else if (p.issued < seq) {
      add(p, "at seq " + std::to_string(p.issued) + "; now: " + doing_now(p));
    }
  }
  if (report.missing.empty()) {
    // Everyone issued the operation: a different one under the same number is a desync; else
    // name the ranks whose communication is still behind.
    for (const PeerProgress& p : peers) {
      if (p.current.seq == seq && mine.kind != OpKind::none && !p.current.same_operation(mine)) {
        add(p, "desync: it issued " + p.current.describe() + " where this rank issued " +
                   mine.describe());
      } else if (p.completed + 1 < seq) {
        add(p, "issued it but still runs " + (p.current.seq != 0
                                                  ? p.current.describe()
                                                  : "seq " + std::to_string(p.completed + 1)));
      }
    }
  }
  if (report.missing.empty()) {
    report.description = "none (every rank has issued seq " + std::to_string(seq) +
                         "; the transport itself is slow or stuck)";
  }
  return report;
}

std::vector<int> inquiry_targets(int rank, int size) {
  std::vector<int> targets;
  if (size <= kAskEveryoneUpTo || rank == 0) {
    for (int r = 0; r < size; ++r)
      if (r != rank) targets.push_back(r);
    return targets;
  }
  for (int r : {0, (rank + size - 1) % size, (rank + 1) % size})
    if (r != rank && std::find(targets.begin(), targets.end(), r) == targets.end())
      targets.push_back(r);
  std::sort(targets.begin(), targets.end());
  return targets;
}

}  // namespace slimtrain::comm
