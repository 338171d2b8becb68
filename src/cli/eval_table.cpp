#include "slimtrain/cli/eval_table.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace slimtrain::cli {
namespace {

std::string row(const eval::ClassMetrics& m) {
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %9.4f %9.4f %9.4f %8lld\n", m.name.c_str(), m.precision,
                m.recall, m.f1, static_cast<long long>(m.support));
  return line;
}

std::string confusions(const eval::Metrics& m) {
  if (!m.confusion.empty() || m.top_confusions.empty()) return "";
  std::string out = "most frequent confusions (true -> predicted: samples), from the first " +
                    std::to_string(m.confusion_sampled) + " samples (" +
                    std::to_string(m.confusion_sampled_wrong) +
                    " wrong): the whole matrix is kept up to --confusion-max-classes " +
                    std::to_string(m.confusion_max_classes) + "\n";
  for (const eval::Confusion& c : m.top_confusions) {
    const auto& names = m.per_class;
    out += "  " + names[static_cast<std::size_t>(c.true_class)].name + " -> " +
           names[static_cast<std::size_t>(c.predicted)].name + ": " + std::to_string(c.count) +
           "\n";
  }
  return out;
}

}  // namespace

std::string per_class_table(const eval::Metrics& m, bool all_classes) {
  char head[128];
  std::snprintf(head, sizeof head, "%-20s %9s %9s %9s %8s\n", "class", "precision", "recall", "f1",
                "support");
  std::string out = head;
  // Classes the split holds or the model predicts; the others score 0 and say nothing.
  std::vector<std::size_t> listed;
  for (std::size_t k = 0; k < m.per_class.size(); ++k)
    if (all_classes || m.per_class[k].support > 0 || m.per_class[k].predicted > 0)
      listed.push_back(k);
  if (all_classes || listed.size() <= 2 * kTableEnds) {
    for (const std::size_t k : listed) out += row(m.per_class[k]);
    return out + confusions(m);
  }
  // Lowest F1 first (a larger class before a smaller one at the same F1), then the highest.
  std::stable_sort(listed.begin(), listed.end(), [&](std::size_t a, std::size_t b) {
    const eval::ClassMetrics &x = m.per_class[a], &y = m.per_class[b];
    return x.f1 != y.f1 ? x.f1 < y.f1 : x.support > y.support;
  });
  for (std::size_t i = 0; i < kTableEnds; ++i) out += row(m.per_class[listed[i]]);
  char gap[192];
  std::snprintf(gap, sizeof gap,
                "... %zu classes of F1 %.4f to %.4f between (--per-class all lists every one)\n",
                listed.size() - 2 * kTableEnds, m.per_class[listed[kTableEnds]].f1,
                m.per_class[listed[listed.size() - kTableEnds - 1]].f1);
  out += gap;
  for (std::size_t i = listed.size() - kTableEnds; i < listed.size(); ++i)
    out += row(m.per_class[listed[i]]);
  return out + confusions(m);
}

}  // namespace slimtrain::cli
