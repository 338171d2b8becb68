#include "slimtrain/core/check_hdf5.hpp"

namespace slimtrain::detail {
namespace {
herr_t keep_innermost(unsigned n, const H5E_error2_t* entry, void* out) {
  // The walk goes from the innermost frame outward; the innermost says what really went wrong.
  auto* text = static_cast<std::string*>(out);
  if (n == 0 && entry->desc) *text = entry->desc;
  return 0;
}
}  // namespace

std::string hdf5_error_string() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

void throw_hdf5_error(const std::string& context, const char* call, const char* file, int line) {
  std::string detail = hdf5_error_string();
  throw DataError(concat(context, ": ", call, " failed", detail.empty() ? "" : ": ", detail), file,
                  line);
}

}  // namespace slimtrain::detail
