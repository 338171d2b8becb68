#pragma once
/**
 * @brief The numpy-style name of a tensor element type ("float32", "int64", "bool"): how
 * checkpoints, exports and model descriptions write it. Header only: LibTorch's users include it,
 * core itself does not link LibTorch.
 */
#include <c10/core/ScalarType.h>

#include <string>

namespace slimtrain {

/** @brief "float32", "bfloat16", "uint8", ...; "" for a type with no such name (complex, say). */
inline std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Double:
      return "float64";
    case c10::ScalarType::Float:
      return "float32";
    case c10::ScalarType::Half:
      return "float16";
    case c10::ScalarType::BFloat16:
      return "bfloat16";
    case c10::ScalarType::Long:
      return "int64";
    case c10::ScalarType::Int:
      return "int32";
    case c10::ScalarType::Short:
      return "int16";
    case c10::ScalarType::Char:
      return "int8";
    case c10::ScalarType::Byte:
      return "uint8";
    case c10::ScalarType::Bool:
      return "bool";
    default:
      return "";
  }
}

}  // namespace slimtrain
