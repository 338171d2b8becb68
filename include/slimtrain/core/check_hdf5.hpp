#pragma once
/**
 * @brief CHECK_HDF5: turns a negative HDF5 return (herr_t or hid_t) into a DataError carrying the
 * innermost message of HDF5's error stack and the caller's context (file, dataset).
 */
#include <hdf5.h>

#include <string>

#include "slimtrain/core/error.hpp"

namespace slimtrain::detail {
/** @brief The innermost description on HDF5's current error stack, or "" if empty. */
std::string hdf5_error_string();
[[noreturn]] void throw_hdf5_error(const std::string& context, const char* call, const char* file,
                                   int line);
}  // namespace slimtrain::detail

/** @brief Evaluates `call`; if negative, throws DataError "<context>: <call> failed: <hdf5 msg>".
 */
#define SLIMTRAIN_CHECK_HDF5(call, context)                                        \
  ([&]() {                                                                         \
    const auto slimtrain_h5_rc_ = (call);                                          \
    if (slimtrain_h5_rc_ < 0)                                                      \
      ::slimtrain::detail::throw_hdf5_error((context), #call, __FILE__, __LINE__); \
    return slimtrain_h5_rc_;                                                       \
  }())
