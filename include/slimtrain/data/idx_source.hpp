#pragma once
/** @brief MNIST-style IDX files (images idx3 + labels idx1, uint8), raw or gzipped. */
#include <memory>

#include "slimtrain/data/input_file.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

/** @brief One parsed IDX array: its dimensions and a view of its uint8 payload. */
struct IdxArray {
  std::vector<std::int64_t> dims;
  const std::uint8_t* data = nullptr;
};

/**
 * @brief Parses an IDX buffer; `name` is used in messages. Throws DataError on a wrong magic, an
 * element type other than uint8 (0x08), or a payload shorter or longer than the dimensions say.
 */
IdxArray parse_idx(const std::uint8_t* bytes, std::size_t size, const std::string& name);

/** @brief Images [N, H, W] with labels [N]; checks that the counts match. */
class IdxSource : public RecordSource {
 public:
  IdxSource(const std::string& images_path, const std::string& labels_path);
  /** @brief From bytes already opened (open_input_shared, tests, fuzzing). */
  IdxSource(InputBytes images, std::string images_name, InputBytes labels, std::string labels_name);

  std::int64_t size() const override { return count_; }
  const std::vector<std::int64_t>& sample_shape() const override { return shape_; }
  ElementType element_type() const override { return ElementType::kUint8; }
  std::int64_t read(std::int64_t i, void* x) const override;
  std::string describe() const override { return images_name_; }

 private:
  void parse();
  InputBytes images_bytes_, labels_bytes_;
  std::string images_name_, labels_name_;
  IdxArray images_, labels_;
  std::int64_t count_ = 0;
  std::vector<std::int64_t> shape_;
};

}  // namespace slimtrain::data
