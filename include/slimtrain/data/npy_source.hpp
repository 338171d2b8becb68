#pragma once
/** @brief NumPy .npy arrays: features [N, ...] (u1, i8, f4, f8) and integer labels [N]. */
#include "slimtrain/data/input_file.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

/** @brief A parsed .npy header and a view of the payload. */
struct NpyArray {
  char kind = 0;  ///< 'u', 'i' or 'f'
  int item_size = 0;
  std::vector<std::int64_t> shape;
  const std::uint8_t* data = nullptr;
};

/**
 * @brief Parses a .npy buffer (format versions 1-3). Throws DataError naming `name` for a bad
 * magic or header, big-endian or non-numeric dtypes, Fortran order, or a short payload.
 */
NpyArray parse_npy(const std::uint8_t* bytes, std::size_t size, const std::string& name);

class NpySource : public RecordSource {
 public:
  NpySource(const std::string& x_path, const std::string& y_path);
  /** @brief From bytes already opened (open_input_shared, tests, fuzzing). */
  NpySource(InputBytes x, std::string x_name, InputBytes y, std::string y_name);

  std::int64_t size() const override { return count_; }
  const std::vector<std::int64_t>& sample_shape() const override { return shape_; }
  ElementType element_type() const override { return type_; }
  std::int64_t read(std::int64_t i, void* x) const override;
  std::string describe() const override { return x_name_; }

 private:
  void parse();
  InputBytes x_bytes_, y_bytes_;
  std::string x_name_, y_name_;
  NpyArray x_, y_;
  std::int64_t count_ = 0;
  std::vector<std::int64_t> shape_;
  ElementType type_ = ElementType::kFloat32;
};

}  // namespace slimtrain::data
