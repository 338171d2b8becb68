#include "slimtrain/data/text_table.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "slimtrain/core/detail/joined.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/text_check.hpp"

namespace slimtrain::data {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

TextFormat text_format_of(const std::string& path, const std::string& option,
                          const TextColumns& columns) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    SLIMTRAIN_THROW(ConfigError, option, ": ", path,
                    " is a directory; give the file of records (.csv, .tsv or .jsonl)");
  std::string name = path;
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  if (ends_with(name, ".csv")) return TextFormat::csv;
  if (ends_with(name, ".tsv")) return TextFormat::tsv;
  if (ends_with(name, ".jsonl")) return TextFormat::jsonl;
  if (columns.delimiter != '\0')
    return columns.delimiter == '\t' ? TextFormat::tsv : TextFormat::csv;
  SLIMTRAIN_THROW(ConfigError, option, ": ", path,
                  ": the extension says neither .csv, .tsv nor .jsonl (optionally .gz); for "
                  "another, name the delimiter (--delimiter)");
}

TextTable::TextTable(InputBytes bytes, std::string name, TextFormat format,
                     const TextColumns& columns)
    : bytes_(std::move(bytes)), name_(std::move(name)), format_(format) {
  if (columns.text.empty() || columns.text.size() > 2)
    SLIMTRAIN_THROW(ConfigError, "--text-column: give one or two (a pair), not ",
                    columns.text.size());
  delimiter_ = columns.delimiter != '\0'   ? columns.delimiter
               : format == TextFormat::tsv ? '\t'
                                           : ',';
  quoting_ = columns.quoting.value_or(delimiter_ == '\t' ? Quoting::none : Quoting::csv);
  // A byte order mark is no part of the first column's name or the first text.
  const auto* head = bytes_.data();
  if (bytes_.size() >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) start_ = 3;
  if (format == TextFormat::jsonl) {
    index_lines();
  } else {
    // As pandas reads a CSV by default: the first row names the columns (--no-header: it is a
    // record, and columns are indices).
    header_ = columns.header;
    index_delimited();
  }
  if (records_.empty()) SLIMTRAIN_THROW(DataError, name_, ": no records");
  resolve_columns(columns);
}

// One pass over the bytes, quote-aware: a newline inside a quoted field belongs to the record.
void TextTable::index_delimited() {
  const char* text = reinterpret_cast<const char*>(bytes_.data());
  const std::size_t size = bytes_.size();
  std::size_t start = start_;
  std::int64_t line = 1, start_line = 1;
  bool quoted = false, field_start = true, blank = true;
  auto finish = [&](std::size_t end) {
    if (!blank) records_.push_back({start, end, start_line});
    blank = true;
    field_start = true;
  };
  const bool quotes = quoting_ == Quoting::csv;
  for (std::size_t p = start_; p < size; ++p) {
    const char c = text[p];
    if (quoted) {
      if (c == '"' && p + 1 < size && text[p + 1] == '"') {
        ++p;
      } else if (c == '"') {
        quoted = false;
      } else if (c == '\n') {
        ++line;
      }
      continue;
    }
    if (c == '\n') {
      finish(p);
      start = p + 1;
      start_line = ++line;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\r') blank = false;
    if (c == ' ' || (c == '\t' && delimiter_ != '\t')) continue;  // blanks before a quote
    if (c == '"' && field_start && quotes) quoted = true;
    field_start = c == delimiter_;
  }
  if (quoted)
    SLIMTRAIN_THROW(DataError, name_, ": line ", start_line,
                    ": a quoted field opened in this record is never closed");
  finish(size);
  if (header_ && !records_.empty()) {
    header_fields_ = fields(records_.front());
    for (std::string& f : header_fields_) f = trimmed(f);
    records_.erase(records_.begin());
  }
}

void TextTable::index_lines() {
  const char* text = reinterpret_cast<const char*>(bytes_.data());
  const std::size_t size = bytes_.size();
  std::size_t start = start_;
  std::int64_t line = 1;
  while (start < size) {
    const void* nl = std::memchr(text + start, '\n', size - start);
    const std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text) : size;
    if (!trimmed(std::string(text + start, end - start)).empty())
      records_.push_back({start, end, line});
    start = end + 1;
    ++line;
  }
}

void TextTable::resolve_columns(const TextColumns& columns) {
  if (format_ == TextFormat::jsonl) {
    if (columns.label == "last" || columns.label == "first")
      SLIMTRAIN_THROW(ConfigError, "--label-column: ", name_,
                      " holds JSON objects; name the label's key (e.g. --label-column label)");
    text_key_ = columns.text;
    image_key_ = columns.images;
    label_key_ = columns.label;
    return;
  }
  field_count_ = header_ ? static_cast<std::int64_t>(header_fields_.size())
                         : static_cast<std::int64_t>(fields(records_.front()).size());
  auto column = [&](const std::string& spec, const char* option) -> std::int64_t {
    if (!is_index(spec) && !header_)
      SLIMTRAIN_THROW(ConfigError, option, ": '", printable(spec), "' names a column, but with ",
                      "--no-header ", name_,
                      " has no header: give the column's index (counted from 0)");
    if (is_index(spec)) {
      std::int64_t index = 0;
      std::from_chars(spec.data(), spec.data() + spec.size(), index);
      if (index >= field_count_)
        SLIMTRAIN_THROW(ConfigError, option, ": column ", spec, " does not exist in ", name_, " (",
                        field_count_, field_count_ == 1 ? " column" : " columns",
                        ", counted from 0)");
      return index;
    }
    for (std::size_t i = 0; i < header_fields_.size(); ++i)
      if (header_fields_[i] == spec) return static_cast<std::int64_t>(i);
    SLIMTRAIN_THROW(ConfigError, option, ": '", printable(spec), "' is not a column of ", name_,
                    " (its header: ", printable(detail::joined(header_fields_)), ")");
  };
  for (const std::string& spec : columns.text) text_index_.push_back(column(spec, "--text-column"));
  for (const std::string& spec : columns.images)
    image_index_.push_back(column(spec, "--image-column"));
  label_index_ = columns.label == "last"    ? field_count_ - 1
                 : columns.label == "first" ? 0
                                            : column(columns.label, "--label-column");
  for (std::int64_t t : text_index_)
    if (t == label_index_)
      SLIMTRAIN_THROW(ConfigError, "--text-column and --label-column name the same column (", t,
                      ") of ", name_);
}

std::vector<std::string> TextTable::fields(const Record& record) const {
  const char* p = reinterpret_cast<const char*>(bytes_.data()) + record.begin;
  const char* const end = reinterpret_cast<const char*>(bytes_.data()) + record.end;
  std::vector<std::string> out;
  if (quoting_ == Quoting::none) {  // literal: a delimiter ends a field, nothing else
    const char* stop = end > p && end[-1] == '\r' ? end - 1 : end;  // CRLF
    while (true) {
      const void* d = std::memchr(p, delimiter_, static_cast<std::size_t>(stop - p));
      const char* field_end = d ? static_cast<const char*>(d) : stop;
      out.emplace_back(p, field_end);
      if (field_end >= stop) return out;
      p = field_end + 1;
    }
  }
  while (true) {
    std::string field;
    const char* q = p;
    while (q < end && (*q == ' ' || (*q == '\t' && delimiter_ != '\t'))) ++q;
    if (q < end && *q == '"') {
      for (++q; q < end; ++q) {
        if (*q == '"' && q + 1 < end && q[1] == '"') {
          field += '"';
          ++q;
        } else if (*q == '"') {
          break;
        } else {
          field += *q;
        }
      }
      ++q;  // the closing quote
      while (q < end && (*q == ' ' || *q == '\r' || (*q == '\t' && delimiter_ != '\t'))) ++q;
      if (q < end && *q != delimiter_)
        SLIMTRAIN_THROW(DataError, name_, ": line ", record.line, ", column ", out.size(),
                        ": text after a closing quote (a quote inside a quoted field is \"\")");
      p = q;
    } else {
      const void* d = std::memchr(p, delimiter_, static_cast<std::size_t>(end - p));
      const char* field_end = d ? static_cast<const char*>(d) : end;
      field.assign(p, field_end);
      p = field_end;
    }
    out.push_back(std::move(field));
    if (p >= end) break;
    ++p;  // the delimiter
  }
  return out;
}

namespace {

// A label's text: an integer, or a class name; a number that is no integer is neither.
void set_label(TextRecord& record, const std::string& text, const std::string& where) {
  record.label = trimmed(text);
  if (record.label.empty()) SLIMTRAIN_THROW(DataError, where, ": empty label");
  const char* b = record.label.data();
  const char* e = b + record.label.size();
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(b, e, value);
  if (ec == std::errc() && ptr == e) {
    record.integer_label = true;
    return;
  }
  double number = 0;
  auto [end, error] = std::from_chars(b, e, number);
  if (error == std::errc() && end == e) {
    // 1.0 is how pandas writes the integer 1 in a column with gaps: the integer it is.
    if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 9.0e15) {
      record.label = std::to_string(static_cast<std::int64_t>(number));
      record.integer_label = true;
      return;
    }
    SLIMTRAIN_THROW(DataError, where, ": label '", record.label,
                    "' is a number but not an integer (labels are integers or class names)");
  }
}

void add_text(TextRecord& record, std::string text, const std::string& where) {
  if (trimmed(text).empty()) SLIMTRAIN_THROW(DataError, where, ": empty text");
  record.texts.push_back(std::move(text));
}

}  // namespace

TextRecord TextTable::read(std::int64_t i) const {
  const Record& record = records_[static_cast<std::size_t>(i)];
  return format_ == TextFormat::jsonl ? read_json(record) : read_delimited(record);
}

TextRecord TextTable::read_delimited(const Record& record) const {
  const std::vector<std::string> f = fields(record);
  if (static_cast<std::int64_t>(f.size()) != field_count_) {
    const bool more = static_cast<std::int64_t>(f.size()) > field_count_;
    const char* hint = !more ? " (a record cut short: a line break inside an unquoted text?)"
                       : quoting_ == Quoting::csv
                           ? " (a text holding a delimiter must be quoted)"
                           : " (with --quoting none a delimiter always ends a field; a text "
                             "holding one needs --quoting csv)";
    SLIMTRAIN_THROW(DataError, name_, ": line ", record.line, " has ", f.size(),
                    f.size() == 1 ? " field" : " fields", ", expected ", field_count_,
                    header_ ? " (as the header)" : " (as the first record)", hint);
  }
  const std::string at = name_ + ": line " + std::to_string(record.line) + ", column ";
  TextRecord out;
  for (std::int64_t t : text_index_)
    add_text(out, f[static_cast<std::size_t>(t)], at + std::to_string(t));
  for (std::int64_t c : image_index_)
    if (!trimmed(f[static_cast<std::size_t>(c)]).empty())
      out.images.push_back(trimmed(f[static_cast<std::size_t>(c)]));
  set_label(out, f[static_cast<std::size_t>(label_index_)], at + std::to_string(label_index_));
  return out;
}

TextRecord TextTable::read_json(const Record& record) const {
  const char* text = reinterpret_cast<const char*>(bytes_.data());
  const std::string at = name_ + ": line " + std::to_string(record.line);
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(text + record.begin, text + record.end);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(DataError, at, ": not JSON (", e.what(), ")");
  }
  if (!object.is_object()) SLIMTRAIN_THROW(DataError, at, ": not a JSON object");
  auto value = [&](const std::string& key) -> const nlohmann::json& {
    const auto it = object.find(key);
    if (it == object.end()) {
      std::vector<std::string> keys;
      for (const auto& item : object.items()) keys.push_back(item.key());
      SLIMTRAIN_THROW(DataError, at, ": no key '", key, "' (its keys: ", detail::joined(keys), ")");
    }
    return *it;
  };
  TextRecord out;
  for (const std::string& key : text_key_) {
    const nlohmann::json& v = value(key);
    if (!v.is_string())
      SLIMTRAIN_THROW(DataError, at, ", key '", key, "': the text is not a string");
    add_text(out, v.get<std::string>(), at + ", key '" + key + "'");
  }
  for (const std::string& key : image_key_) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) continue;  // no image: a text-only sample
    if (!it->is_string())
      SLIMTRAIN_THROW(DataError, at, ", key '", key, "': the image path is not a string");
    if (!trimmed(it->get<std::string>()).empty())
      out.images.push_back(trimmed(it->get<std::string>()));
  }
  const nlohmann::json& label = value(label_key_);
  const std::string where = at + ", key '" + label_key_ + "'";
  if (label.is_string()) {
    set_label(out, label.get<std::string>(), where);
  } else if (label.is_number()) {
    set_label(out, label.dump(), where);
  } else {
    SLIMTRAIN_THROW(DataError, where, ": the label is neither an integer nor a class name");
  }
  return out;
}

std::string TextTable::folder() const {
  const std::string parent = std::filesystem::path(name_).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string TextTable::describe_record(std::int64_t i) const {
  return name_ + ": line " + std::to_string(records_[static_cast<std::size_t>(i)].line);
}

}  // namespace slimtrain::data
