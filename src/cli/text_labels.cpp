#include "slimtrain/cli/text_labels.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::cli {
namespace {

std::optional<std::int64_t> integer_of(const std::string& label) {
  std::int64_t value = 0;
  const char* end = label.data() + label.size();
  auto [ptr, ec] = std::from_chars(label.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Every rank's distinct labels, once each, in the order the classes take.
std::vector<std::string> classes_present(comm::ControlPlane& control,
                                         const std::vector<SplitLabels>& splits) {
  std::set<std::string> mine;
  for (const SplitLabels& s : splits) mine.insert(s.labels->begin(), s.labels->end());
  std::string lines;
  for (const std::string& label : mine) lines += label + "\n";
  std::set<std::string> all;
  for (const std::string& label : gather_lines(control, lines))
    if (!label.empty()) all.insert(label);
  std::vector<std::string> classes(all.begin(), all.end());
  const bool integers = std::all_of(classes.begin(), classes.end(),
                                    [](const std::string& c) { return integer_of(c).has_value(); });
  if (integers) {
    std::sort(classes.begin(), classes.end(), [](const std::string& a, const std::string& b) {
      return *integer_of(a) < *integer_of(b);
    });
  } else if (std::any_of(classes.begin(), classes.end(),
                         [](const std::string& c) { return integer_of(c).has_value(); })) {
    log::info_rank0(
        "prep text: the labels mix integers and names: all are class names, in text "
        "order");
  }
  return classes;
}

}  // namespace

std::vector<std::string> resolve_text_labels(comm::ControlPlane& control,
                                             std::vector<SplitLabels>& splits, PrepOptions& options,
                                             std::int64_t& num_classes) {
  std::vector<std::string> classes = options.class_names;
  if (classes.empty() && options.num_classes > 0)
    for (std::int64_t c = 0; c < options.num_classes; ++c) classes.push_back(std::to_string(c));
  if (classes.empty()) classes = classes_present(control, splits);
  if (static_cast<std::int64_t>(classes.size()) > data::kMaxClasses)
    SLIMTRAIN_THROW(DataError, "the labels name ", classes.size(), " classes, more than the ",
                    data::kMaxClasses, " a file may hold");
  std::map<std::string, std::int64_t> index;
  for (std::size_t c = 0; c < classes.size(); ++c)
    index.emplace(classes[c], static_cast<std::int64_t>(c));
  const char* fixed_by = !options.class_names.empty() ? "--class-names" : "--num-classes";
  comm::on_all_ranks(control, [&] {
    for (SplitLabels& s : splits)
      for (std::size_t i = 0; i < s.labels->size(); ++i) {
        const auto it = index.find((*s.labels)[i]);
        if (it == index.end())
          SLIMTRAIN_THROW(
              DataError, s.where(i), ": label '", (*s.labels)[i], "' is not one of the ",
              classes.size(), " classes ", fixed_by, " gives (",
              classes.size() <= 8 ? listed(classes) : classes.front() + " ... " + classes.back(),
              ")");
        s.y.push_back(it->second);
      }
  });
  options.class_names = classes;
  num_classes = static_cast<std::int64_t>(classes.size());
  return classes;
}

}  // namespace slimtrain::cli
