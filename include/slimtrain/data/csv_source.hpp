#pragma once
/**
 * @brief Numeric CSV: one sample per line, float features and one label column, of integers or of
 * class names (iris's species, say), which become indices once every file's names are known.
 */
#include <map>
#include <string>
#include <vector>

#include "slimtrain/data/input_file.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

struct CsvOptions {
  /** @brief "last", "first", or a 0-based column index. */
  std::string label_column = "last";
  bool header = false;
  char delimiter = ',';
};

/**
 * @brief Indexes the lines once; read() parses one line. Blank lines are skipped; every record
 * must have the field count of the first. Errors name the file, the 1-based line and the column.
 */
class CsvSource : public RecordSource {
 public:
  CsvSource(const std::string& path, const CsvOptions& options);
  CsvSource(InputBytes bytes, std::string name, const CsvOptions& options);

  std::int64_t size() const override { return static_cast<std::int64_t>(lines_.size()); }
  const std::vector<std::int64_t>& sample_shape() const override { return shape_; }
  ElementType element_type() const override { return ElementType::kFloat32; }
  std::int64_t read(std::int64_t i, void* x) const override;
  std::string describe() const override { return name_; }

  /**
   * @brief The label column's distinct names, sorted, when its labels are names; empty when they
   * are integers. DataError naming both lines when the column mixes the two.
   */
  const std::vector<std::string>& label_names() const { return names_; }
  /**
   * @brief From now on read() returns a name label's index in `classes` (sorted names of every
   * file, or --class-names); DataError naming file and line for a name not in it.
   */
  void use_class_names(const std::vector<std::string>& classes);

 private:
  struct Line {
    std::size_t begin, end;
    std::int64_t number;
  };
  void index(const CsvOptions& options);
  /** @brief Whether every label is an integer; else collects the names (see label_names). */
  void scan_labels();
  /** @brief Field `column` of line `line`, trimmed. */
  std::string field(const Line& line, std::int64_t column) const;
  InputBytes bytes_;
  std::string name_;
  char delimiter_ = ',';
  std::vector<Line> lines_;
  std::int64_t fields_ = 0;
  std::int64_t label_index_ = 0;
  std::vector<std::int64_t> shape_;
  std::vector<std::string> names_;
  std::map<std::string, std::int64_t> class_of_;
};

}  // namespace slimtrain::data
