#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

std::size_t element_size(ElementType type) {
  return type == ElementType::kUint8 ? 1 : 4;
}

const char* element_name(ElementType type) {
  return type == ElementType::kUint8 ? "uint8" : "float32";
}

std::string RecordSource::describe_record(std::int64_t i) const {
  return describe() + ": record " + std::to_string(i);
}

std::int64_t RecordSource::sample_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : sample_shape()) n *= d;
  return n;
}

}  // namespace slimtrain::data
