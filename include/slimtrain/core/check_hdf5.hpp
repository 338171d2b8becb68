#pragma once
/**
 * @brief CHECK_HDF5: turns a negative HDF5 return (herr_t or hid_t) into a DataError carrying the
 * caller's context (file, dataset), what the call was doing in words ("cannot open the file") and
 * what HDF5 says went wrong: the innermost message of its error stack ("file is already open for
 * write (may use <h5clear file> to clear file consistency flags)").
 */
#include <hdf5.h>

#include <string>

#include "slimtrain/core/error.hpp"

namespace slimtrain::detail {
/**
 * @brief The innermost description on HDF5's current error stack (past the plugin loader's own),
 * or "" if empty; clears the stack.
 */
std::string hdf5_error_string();
[[noreturn]] void throw_hdf5_error(const std::string& context, const char* call, const char* file,
                                   int line);
}  // namespace slimtrain::detail

/**
 * @brief Evaluates `call`; if negative, throws DataError "<context>: <what it was doing>: <what
 * HDF5 says>".
 */
#define SLIMTRAIN_CHECK_HDF5(call, context)                                        \
  ([&]() {                                                                         \
    const auto slimtrain_h5_rc_ = (call);                                          \
    if (slimtrain_h5_rc_ < 0)                                                      \
      ::slimtrain::detail::throw_hdf5_error((context), #call, __FILE__, __LINE__); \
    return slimtrain_h5_rc_;                                                       \
  }())
