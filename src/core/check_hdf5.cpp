#include "slimtrain/core/check_hdf5.hpp"

#include <cstring>
#include <utility>

namespace slimtrain::detail {
namespace {

// Walked from the API call inward, the entry kept is the innermost that says what went wrong:
// not the plugin loader's, whose failed search for a filter's plugin sits under the useful
// "required filter 'lzf' is not registered".
herr_t keep_innermost(unsigned, const H5E_error2_t* entry, void* out) {
  auto* text = static_cast<std::string*>(out);
  const bool plugin_search = entry->func_name && std::strncmp(entry->func_name, "H5PL", 4) == 0;
  if (entry->desc && *entry->desc && (!plugin_search || text->empty())) *text = entry->desc;
  return 0;
}

// What a failed call was doing, in words: messages name the file and the object, never C++.
std::string doing(const char* call) {
  static const std::pair<const char*, const char*> words[] = {
      {"H5Fopen", "cannot open the file"},
      {"H5Fcreate", "cannot create the file"},
      {"H5Fflush", "cannot flush the file"},
      {"H5Fget", "cannot read the file's properties"},
      {"H5Dopen", "cannot open the dataset"},
      {"H5Dcreate", "cannot create the dataset"},
      {"H5Dread", "cannot read"},
      {"H5Dwrite", "cannot write"},
      {"H5Dget", "cannot read the dataset's description"},
      {"H5Gopen", "cannot open the group"},
      {"H5Gget", "cannot read the group"},
      {"H5Aopen", "cannot open the attribute"},
      {"H5Aread", "cannot read the attribute"},
      {"H5Awrite", "cannot write the attribute"},
      {"H5Aget", "cannot read the attribute's description"},
      {"H5Oget", "cannot read the object's description"},
      {"H5Lget", "cannot read the group's links"},
      {"H5S", "cannot describe the selection"},
      {"H5T", "cannot describe the type"},
      {"H5P", "cannot set HDF5's properties"},
      {"H5I", "cannot identify the object"},
  };
  const std::string name(call, std::strcspn(call, "("));
  for (const auto& [prefix, text] : words)
    if (name.rfind(prefix, 0) == 0) return text;
  return name + " failed";
}

}  // namespace

std::string hdf5_error_string() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

void throw_hdf5_error(const std::string& context, const char* call, const char* file, int line) {
  const std::string detail = hdf5_error_string();
  throw DataError(concat(context, ": ", doing(call), detail.empty() ? "" : ": ", detail), file,
                  line);
}

}  // namespace slimtrain::detail
