#include "slimtrain/train/step_control.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "slimtrain/comm/stall_report.hpp"
#include "slimtrain/comm/words.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::train {
namespace {

using comm::Field;
using comm::FieldOp;

// The control record, field by field.
enum Slot {
  kStop,
  kDue,
  kLossSum,
  kLossCount,
  kFpMax,
  kFpMin,
  kOpsMax,
  kOpsMin,
  kStepMax,
  kStepMin,
  kNonfinite,
  kFields
};

// Desync diagnosis: each rank shares its latest data-plane operations, 6 words each.
constexpr std::size_t kShared = 16;
constexpr std::size_t kOpWords = 6;  // seq, kind, dtype, count, tag
constexpr std::size_t kTagWords = 2;

std::int64_t as_signed(std::uint64_t v) {
  std::int64_t out = 0;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

std::string describe(const comm::IssuedOp& op) {
  comm::OpSummary s;
  s.seq = op.seq;
  s.kind = op.kind;
  s.bytes = op.bytes();
  s.tag = op.tag;
  return s.describe();
}

std::string ranks_text(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  const bool many_hosts = std::set<std::string>(hosts.begin(), hosts.end()).size() > 1;
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
    const auto r = static_cast<std::size_t>(ranks[i]);
    if (many_hosts && r < hosts.size()) out += " on " + hosts[r];
  }
  return out;
}

std::vector<std::int64_t> pack(const std::vector<comm::IssuedOp>& ops) {
  std::vector<std::int64_t> words(1 + kShared * kOpWords, 0);
  const std::size_t n = std::min(ops.size(), kShared);
  words[0] = static_cast<std::int64_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t* w = words.data() + 1 + i * kOpWords;
    w[0] = static_cast<std::int64_t>(ops[i].seq);
    w[1] = static_cast<std::int64_t>(ops[i].kind);
    w[2] = static_cast<std::int64_t>(ops[i].dtype);
    w[3] = static_cast<std::int64_t>(ops[i].count);
    comm::pack_text(ops[i].tag, w + 4, kTagWords);
  }
  return words;
}

std::vector<comm::IssuedOp> unpack(const std::int64_t* words) {
  std::vector<comm::IssuedOp> ops;
  const auto n = static_cast<std::size_t>(std::clamp<std::int64_t>(words[0], 0, kShared));
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t* w = words + 1 + i * kOpWords;
    comm::IssuedOp op;
    op.seq = static_cast<std::uint64_t>(w[0]);
    op.kind = static_cast<comm::OpKind>(w[1]);
    op.dtype = static_cast<comm::DType>(w[2]);
    op.count = static_cast<std::uint64_t>(w[3]);
    op.tag = comm::unpack_text(w + 4, kTagWords);
    ops.push_back(op);
  }
  return ops;
}

}  // namespace

std::string first_divergence(const std::vector<std::vector<comm::IssuedOp>>& ops,
                             const std::vector<std::string>& hosts) {
  std::size_t longest = 0;
  for (const auto& mine : ops) longest = std::max(longest, mine.size());
  for (std::size_t i = 0; i < longest; ++i) {
    // Ranks grouped by what they issued as their i-th operation (nothing, past their end).
    using Key = std::tuple<bool, std::uint64_t, int, int, std::uint64_t>;
    std::map<Key, std::vector<int>> groups;
    std::map<Key, std::string> said;
    for (std::size_t r = 0; r < ops.size(); ++r) {
      Key key{false, 0, 0, 0, 0};
      std::string what = "nothing";
      if (i < ops[r].size()) {
        const comm::IssuedOp& op = ops[r][i];
        key = Key{true, op.seq, static_cast<int>(op.kind), static_cast<int>(op.dtype), op.count};
        what = describe(op);
      } else if (!ops[r].empty()) {
        what = "nothing after #" + std::to_string(ops[r].back().seq);
      }
      groups[key].push_back(static_cast<int>(r));
      said.emplace(key, what);
    }
    if (groups.size() < 2) continue;
    // The odd ranks out first: smaller sides before larger, rank 0's side last.
    std::vector<std::pair<std::vector<int>, std::string>> sides;
    for (const auto& [key, ranks] : groups) sides.emplace_back(ranks, said[key]);
    std::stable_sort(sides.begin(), sides.end(), [](const auto& a, const auto& b) {
      const bool a0 = a.first.front() == 0, b0 = b.first.front() == 0;
      if (a0 != b0) return b0;
      return a.first.size() < b.first.size();
    });
    std::string out;
    for (std::size_t k = 0; k < sides.size(); ++k) {
      out += k == 0 ? "" : k == 1 ? " where " : "; ";
      out += ranks_text(sides[k].first, hosts) + " issued " + sides[k].second;
    }
    return out;
  }
  return "";
}

StepControl::StepControl(comm::ControlPlane& control, comm::DataPlane& data,
                         std::vector<std::string> hosts)
    : control_(control), data_(data), hosts_(std::move(hosts)) {}

StepDecision StepControl::decide(const StepVote& vote) {
  const std::uint64_t ops = data_.ops_issued();
  const std::int64_t fp = as_signed(data_.fingerprint());
  std::vector<Field> fields(kFields);
  fields[kStop] = Field::of(FieldOp::max, vote.stop ? 1 : 0);
  fields[kDue] = Field::of(FieldOp::max, vote.checkpoint_due ? 1 : 0);
  fields[kLossSum] = Field::real_sum(vote.loss.value_or(0.0));
  fields[kLossCount] = Field::of(FieldOp::sum, vote.loss ? 1 : 0);
  fields[kFpMax] = Field::of(FieldOp::max, fp);
  fields[kFpMin] = Field::of(FieldOp::min, fp);
  fields[kOpsMax] = Field::of(FieldOp::max, static_cast<std::int64_t>(ops));
  fields[kOpsMin] = Field::of(FieldOp::min, static_cast<std::int64_t>(ops));
  fields[kStepMax] = Field::of(FieldOp::max, vote.step);
  fields[kStepMin] = Field::of(FieldOp::min, vote.step);
  fields[kNonfinite] = Field::of(FieldOp::min, vote.nonfinite_loss ? control_.rank() : INT64_MAX);
  comm::OpOptions options;
  options.tag = "step-control";
  const std::vector<Field> all = control_.reduce_fields(std::move(fields), options);

  const bool layout_ok = std::all_of(all.begin(), all.end(),
                                     [](const Field& f) { return static_cast<int>(f.op) != 0; });
  if (!layout_ok || all[kFpMax].value != all[kFpMin].value ||
      all[kOpsMax].value != all[kOpsMin].value || all[kStepMax].value != all[kStepMin].value)
    report_desync(vote.step);
  agreed_ops_ = ops;

  StepDecision d;
  d.stop = all[kStop].value != 0;
  d.checkpoint_due = all[kDue].value != 0;
  if (all[kLossCount].value > 0)
    d.mean_loss = all[kLossSum].real() / static_cast<double>(all[kLossCount].value);
  if (all[kNonfinite].value != INT64_MAX)
    d.nonfinite_rank = static_cast<int>(all[kNonfinite].value);
  return d;
}

void StepControl::check_before_backward(std::int64_t step) {
  // NCCL: a mismatch hangs on the device while this plane still answers, and decide() ends the
  // job. One rank alone has nothing to disagree with.
  if (!data_.device().is_cpu() || control_.size() < 2) return;
  const std::uint64_t ops = data_.ops_issued();
  const std::int64_t fp = as_signed(data_.fingerprint());
  std::vector<Field> fields = {Field::of(FieldOp::max, fp),
                               Field::of(FieldOp::min, fp),
                               Field::of(FieldOp::max, static_cast<std::int64_t>(ops)),
                               Field::of(FieldOp::min, static_cast<std::int64_t>(ops)),
                               Field::of(FieldOp::max, step),
                               Field::of(FieldOp::min, step)};
  comm::OpOptions options;
  options.tag = "step-plan";
  const std::vector<Field> all = control_.reduce_fields(std::move(fields), options);
  const bool layout_ok = std::all_of(all.begin(), all.end(),
                                     [](const Field& f) { return static_cast<int>(f.op) != 0; });
  if (!layout_ok || all[0].value != all[1].value || all[2].value != all[3].value ||
      all[4].value != all[5].value)
    report_desync(step, " (checked before its gradient buckets)");
  agreed_ops_ = ops;
}

void StepControl::report_desync(std::int64_t step, const char* when) {
  comm::OpOptions options;
  options.tag = "desync-report";
  const std::vector<std::int64_t> mine = pack(data_.issued_after(agreed_ops_));
  std::vector<std::int64_t> with_step = mine;
  with_step.push_back(step);
  const std::vector<std::int64_t> all = control_.all_gather(with_step, options);
  const std::size_t stride = with_step.size();
  std::vector<std::vector<comm::IssuedOp>> ops;
  std::map<std::int64_t, std::vector<int>> steps;
  for (int r = 0; r < control_.size(); ++r) {
    const std::int64_t* words = all.data() + static_cast<std::size_t>(r) * stride;
    ops.push_back(unpack(words));
    steps[words[stride - 1]].push_back(r);
  }
  std::string what = first_divergence(ops, hosts_);
  if (steps.size() > 1) {
    std::string where;
    for (const auto& [at, ranks] : steps)
      where += (where.empty() ? "" : ", ") + ranks_text(ranks, hosts_) + " at step " +
               std::to_string(at);
    what = what.empty() ? where : what + " (" + where + ")";
  }
  if (what.empty())
    what = "the data-plane fingerprints differ, but the diverging operation is older than the " +
           std::to_string(kShared) + " last ones each rank keeps";
  data_.dump_flight_recorder();
  throw DesyncError(
      detail::concat("data-plane desync at step ", step, when, ": ", what,
                     "; the ranks are in different collectives, which no deadline would end"),
      __FILE__, __LINE__);
}

}  // namespace slimtrain::train
