#include "slimtrain/data/csv_source.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/input_file.hpp"

namespace slimtrain::data {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Trims blanks around [begin, end).
void trim(const char*& begin, const char*& end) {
  while (begin < end && is_space(*begin)) ++begin;
  while (end > begin && is_space(end[-1])) --end;
}

bool blank(const char* begin, const char* end) {
  trim(begin, end);
  return begin == end;
}

std::int64_t count_fields(const char* begin, const char* end, char delimiter) {
  std::int64_t n = 1;
  for (const char* p = begin; p < end; ++p) n += *p == delimiter;
  return n;
}

}  // namespace

CsvSource::CsvSource(const std::string& path, const CsvOptions& options)
    : CsvSource(open_input(path), path, options) {}

CsvSource::CsvSource(InputBytes bytes, std::string name, const CsvOptions& options)
    : bytes_(std::move(bytes)), name_(std::move(name)), delimiter_(options.delimiter) {
  index(options);
}

void CsvSource::index(const CsvOptions& options) {
  const char* text = reinterpret_cast<const char*>(bytes_.data());
  const std::size_t size = bytes_.size();
  std::size_t pos = 0;
  std::int64_t number = 0;
  bool header_pending = options.header;
  while (pos < size) {
    const void* nl = std::memchr(text + pos, '\n', size - pos);
    const std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text) : size;
    ++number;
    if (!blank(text + pos, text + end)) {
      if (header_pending) {
        header_pending = false;
      } else {
        lines_.push_back({pos, end, number});
      }
    }
    pos = end + 1;
  }
  if (lines_.empty()) SLIMTRAIN_THROW(DataError, name_, ": no data rows");
  const Line& first = lines_.front();
  fields_ = count_fields(text + first.begin, text + first.end, delimiter_);
  if (fields_ < 2) {
    SLIMTRAIN_THROW(DataError, name_, ": line ", first.number, " has ", fields_,
                    " field(s); need at least one feature and a label (wrong --delimiter?)");
  }
  if (options.label_column == "last") {
    label_index_ = fields_ - 1;
  } else if (options.label_column == "first") {
    label_index_ = 0;
  } else {
    std::int64_t column = -1;
    const std::string& s = options.label_column;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), column);
    if (ec != std::errc() || ptr != s.data() + s.size() || column < 0) {
      SLIMTRAIN_THROW(ConfigError, "--label-column: '", s,
                      "' is not last, first or a 0-based column index");
    }
    if (column >= fields_) {
      SLIMTRAIN_THROW(ConfigError, "--label-column: column ", column, " does not exist in ", name_,
                      " (", fields_, " columns)");
    }
    label_index_ = column;
  }
  shape_ = {fields_ - 1};
  scan_labels();
}

std::string CsvSource::field(const Line& line, std::int64_t column) const {
  const char* p = reinterpret_cast<const char*>(bytes_.data()) + line.begin;
  const char* const end = reinterpret_cast<const char*>(bytes_.data()) + line.end;
  for (std::int64_t c = 0; c < column && p <= end; ++c) {
    const void* d = std::memchr(p, delimiter_, static_cast<std::size_t>(end - p));
    p = d ? static_cast<const char*>(d) + 1 : end + 1;
  }
  if (p > end) return "";
  const void* d = std::memchr(p, delimiter_, static_cast<std::size_t>(end - p));
  const char* b = p;
  const char* e = d ? static_cast<const char*>(d) : end;
  trim(b, e);
  return std::string(b, e);
}

void CsvSource::scan_labels() {
  const Line* integer = nullptr;
  const Line* name = nullptr;
  std::string integer_text, name_text;
  std::map<std::string, std::int64_t> seen;
  for (const Line& line : lines_) {
    const std::string label = field(line, label_index_);
    if (label.empty()) continue;  // a short or blank field: read() names that line's problem
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(label.data(), label.data() + label.size(), value);
    const bool is_integer = ec == std::errc() && ptr == label.data() + label.size();
    double number = 0;
    auto [end, error] = std::from_chars(label.data(), label.data() + label.size(), number);
    // A number that is not an integer (1.5, 2e3) is no class name: read() says so.
    if (!is_integer && error == std::errc() && end == label.data() + label.size()) continue;
    if (is_integer && !integer) integer = &line, integer_text = label;
    if (!is_integer && !name) name = &line, name_text = label;
    if (!is_integer) seen.emplace(label, 0);
  }
  if (!name) return;  // integers: read() parses them
  if (integer)
    SLIMTRAIN_THROW(DataError, name_, ": the label column (column ", label_index_,
                    ") mixes integers and class names: line ", integer->number, " has '",
                    integer_text, "', line ", name->number, " has '", name_text,
                    "'; use one or the other");
  for (const auto& entry : seen) names_.push_back(entry.first);
  use_class_names(names_);
}

void CsvSource::use_class_names(const std::vector<std::string>& classes) {
  class_of_.clear();
  for (std::size_t i = 0; i < classes.size(); ++i)
    class_of_.emplace(classes[i], static_cast<std::int64_t>(i));
}

std::int64_t CsvSource::read(std::int64_t i, void* x) const {
  const Line& line = lines_[static_cast<std::size_t>(i)];
  const char* p = reinterpret_cast<const char*>(bytes_.data()) + line.begin;
  const char* const end = reinterpret_cast<const char*>(bytes_.data()) + line.end;
  const std::int64_t fields = count_fields(p, end, delimiter_);
  if (fields != fields_) {
    SLIMTRAIN_THROW(DataError, name_, ": line ", line.number, " has ", fields, " fields, expected ",
                    fields_, " (as on line ", lines_.front().number, ")");
  }
  float* out = static_cast<float*>(x);
  std::int64_t label = 0;
  for (std::int64_t column = 0; column < fields_; ++column) {
    const void* d = std::memchr(p, delimiter_, static_cast<std::size_t>(end - p));
    const char* field_end = d ? static_cast<const char*>(d) : end;
    const char* b = p;
    const char* e = field_end;
    trim(b, e);
    if (column == label_index_ && !names_.empty()) {
      const auto it = class_of_.find(std::string(b, e));
      if (it == class_of_.end())
        SLIMTRAIN_THROW(DataError, name_, ": line ", line.number, ", column ", column,
                        ": label '", std::string(b, e), "' is not one of the class names (",
                        class_of_.size(), " given by --class-names)");
      label = it->second;
    } else if (column == label_index_) {
      auto [ptr, ec] = std::from_chars(b, e, label);
      if (ec != std::errc() || ptr != e || b == e) {
        SLIMTRAIN_THROW(DataError, name_, ": line ", line.number, ", column ", column,
                        ": label '", std::string(b, e), "' is not an integer");
      }
      if (label < 0) {
        SLIMTRAIN_THROW(DataError, name_, ": line ", line.number, ", column ", column,
                        ": label ", label, " is negative");
      }
    } else {
      double value = 0;
      if (b < e && *b == '+') ++b;
      auto [ptr, ec] = std::from_chars(b, e, value);
      if (ec != std::errc() || ptr != e || b == e) {
        SLIMTRAIN_THROW(DataError, name_, ": line ", line.number, ", column ", column, ": '",
                        std::string(b, e), "' is not a number");
      }
      const float f = static_cast<float>(value);
      if (!std::isfinite(f)) {
        SLIMTRAIN_THROW(DataError, name_, ": line ", line.number, ", column ", column,
                        ": feature '", std::string(b, e),
                        "' is NaN or infinite (or overflows float32)");
      }
      *out++ = f;
    }
    p = field_end + 1;
  }
  return label;
}

}  // namespace slimtrain::data
