#pragma once
/**
 * @brief What every input format (IDX, CSV, NPY) offers the preprocessing tool: a count of
 * records, one per-sample shape and element type, and random access to one converted record.
 *
 * Random access lets each MPI rank convert only its own slice of the output rows.
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::data {

/** @brief Element types of /<split>/x in the layout. */
enum class ElementType { kUint8, kFloat32 };

std::size_t element_size(ElementType type);
const char* element_name(ElementType type);

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  /** @brief Number of records (samples). */
  virtual std::int64_t size() const = 0;
  /** @brief Per-sample shape as it will be stored, e.g. {28, 28} or {D}. */
  virtual const std::vector<std::int64_t>& sample_shape() const = 0;
  virtual ElementType element_type() const = 0;
  /**
   * @brief Converts record `i` into `x` (sample_elements() values of element_type()) and returns
   * its label. Throws DataError naming the file and the record (line, index) on bad content.
   */
  virtual std::int64_t read(std::int64_t i, void* x) const = 0;
  /** @brief A short description for messages, e.g. "train.csv". */
  virtual std::string describe() const = 0;
  /** @brief Record `i` in messages: "train.csv: record 7", or the file it came from. */
  virtual std::string describe_record(std::int64_t i) const;

  std::int64_t sample_elements() const;
};

}  // namespace slimtrain::data
