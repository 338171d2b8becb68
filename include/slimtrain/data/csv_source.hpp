#pragma once
/** @brief Numeric CSV: one sample per line, float features and one integer label column. */
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

 private:
  struct Line {
    std::size_t begin, end;
    std::int64_t number;
  };
  void index(const CsvOptions& options);
  InputBytes bytes_;
  std::string name_;
  char delimiter_ = ',';
  std::vector<Line> lines_;
  std::int64_t fields_ = 0;
  std::int64_t label_index_ = 0;
  std::vector<std::int64_t> shape_;
};

}  // namespace slimtrain::data
