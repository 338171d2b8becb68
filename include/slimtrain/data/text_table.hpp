#pragma once
/**
 * @brief Text classification files for `prep text`: CSV, TSV or JSONL (chosen by the extension,
 * after a .gz, or by --delimiter), one record per sample with one or two text columns and a label
 * column.
 *
 * Quoting (--quoting): csv, RFC 4180 (a field that starts with a double quote ends at the next
 * lone quote, "" is a quote inside it, and may hold delimiters and newlines), the default for CSV;
 * none, fields taken literally (a delimiter ends a field, a newline a record, a quote is a
 * character like any other), the default for TSV, which people write unquoted. The first row is
 * a header naming the columns (as pandas reads a CSV by default) unless TextColumns::header is
 * false; columns are given by name or by index, counted from 0 in options and messages alike. A
 * JSONL line is one object; columns are its keys. A UTF-8 byte order mark at the start of the file
 * is skipped. The file is indexed once (record starts and their line numbers); read() parses one
 * record, so each rank converts only its own slice.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slimtrain/data/input_file.hpp"

namespace slimtrain::data {

enum class TextFormat { csv, tsv, jsonl };

/** @brief How CSV and TSV fields are quoted: RFC 4180's quotes, or none (literal fields). */
enum class Quoting { csv, none };

struct TextColumns;

/**
 * @brief By extension (.csv, .tsv, .jsonl, each optionally .gz), else delimited when `columns`
 * names a delimiter (any other extension); ConfigError naming `option`.
 */
TextFormat text_format_of(const std::string& path, const std::string& option,
                          const TextColumns& columns);

struct TextColumns {
  /** @brief One or two: a header name (or JSONL key) or an index counted from 0 (CSV/TSV). */
  std::vector<std::string> text;
  /** @brief As text; "last" or "first" also name a CSV/TSV column. */
  std::string label = "last";
  /** @brief Columns holding image file paths (an image and text together); an empty field is no
   * image (a text-only sample). */
  std::vector<std::string> images;
  /** @brief CSV/TSV: the first record is a header, as pandas reads one by default (false:
   * --no-header, every row a record and columns given by index). */
  bool header = true;
  /** @brief CSV/TSV: the field delimiter ('\0': the format's, ',' or tab). */
  char delimiter = '\0';
  /** @brief CSV/TSV: unset, the format's (csv for CSV, none for TSV). */
  std::optional<Quoting> quoting;
};

struct TextRecord {
  std::vector<std::string> texts;
  std::vector<std::string> images;  ///< the image paths of TextColumns::images given (non-empty)
  std::string label;
  /** @brief The label is an integer (else a class name). */
  bool integer_label = false;
};

class TextTable {
 public:
  /** @brief Indexes `bytes`; DataError naming `name` and the line, ConfigError for a column. */
  TextTable(InputBytes bytes, std::string name, TextFormat format, const TextColumns& columns);

  std::int64_t size() const { return static_cast<std::int64_t>(records_.size()); }
  /** @brief The folder the file is in: where relative image paths start. */
  std::string folder() const;
  /**
   * @brief Record `i`; DataError naming the file, the line and the column for a short record, a
   * stray quote, bad JSON, a missing key, an empty text or label, or a label that is a number
   * but not an integer (one with an integral value, 1.0, is that integer).
   */
  TextRecord read(std::int64_t i) const;
  const std::string& describe() const { return name_; }
  /** @brief "train.csv: line 7" (the line the record starts on). */
  std::string describe_record(std::int64_t i) const;
  /** @brief Whether the file began with a UTF-8 byte order mark (skipped). */
  bool had_byte_order_mark() const { return start_ > 0; }
  /** @brief CSV/TSV: the header's fields (empty without one). */
  const std::vector<std::string>& header() const { return header_fields_; }

 private:
  struct Record {
    std::size_t begin, end;
    std::int64_t line;
  };
  void index_delimited();
  void index_lines();
  void resolve_columns(const TextColumns& columns);
  /** @brief The fields of a CSV/TSV record, unquoted. */
  std::vector<std::string> fields(const Record& record) const;
  TextRecord read_delimited(const Record& record) const;
  TextRecord read_json(const Record& record) const;

  InputBytes bytes_;
  std::string name_;
  TextFormat format_;
  char delimiter_ = ',';
  Quoting quoting_ = Quoting::csv;
  std::size_t start_ = 0;  ///< past a byte order mark
  bool header_ = false;
  std::vector<Record> records_;
  std::vector<std::string> header_fields_;
  std::int64_t field_count_ = 0;
  // CSV/TSV: column indices; JSONL: keys.
  std::vector<std::int64_t> text_index_, image_index_;
  std::int64_t label_index_ = 0;
  std::vector<std::string> text_key_, image_key_;
  std::string label_key_;
};

}  // namespace slimtrain::data
