#pragma once
/** @brief `slimtrain inspect` of safetensors weights: a file, an index or a HuggingFace folder. */
#include <ostream>
#include <string>

namespace slimtrain::ckpt {

/** @brief A *.safetensors file, a *.safetensors.index.json, or a folder holding either. */
bool is_safetensors_path(const std::string& path);

/**
 * @brief Prints the files, the tensor count, elements and bytes by dtype, the metadata and every
 * tensor (name, dtype, shape). With `validate`, reads every tensor and counts the floating ones
 * holding NaN or Inf (DataError naming the first). Every header is checked (DataError naming the
 * file and the tensor).
 */
void inspect_safetensors(const std::string& path, bool validate, std::ostream& out);

}  // namespace slimtrain::ckpt
