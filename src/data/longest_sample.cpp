#include "slimtrain/data/longest_sample.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/hdf5_rows.hpp"

namespace slimtrain::data {

std::int64_t longest_sample(const DatasetInfo& info, const std::string& split) {
  const auto tokens = std::find_if(info.inputs.begin(), info.inputs.end(), [](const InputInfo& in) {
    return in.ragged && in.row_size == 1;
  });
  if (tokens == info.inputs.end()) return 0;
  const std::int64_t rows = info.split_size(split);
  const std::string name = "/" + split + "/inputs/" + tokens->name + "/offsets";
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(rows + 1));
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    Hid file = open_hdf5_read_only(info.path);
    Hid data = open_dataset(file, info.path, name);
    read_rows(data, H5T_NATIVE_INT64, 0, rows + 1, offsets.data(), info.path + ": " + name);
  }
  std::int64_t longest = 0;
  for (std::size_t r = 0; r + 1 < offsets.size(); ++r)
    longest = std::max(longest, offsets[r + 1] - offsets[r]);
  return info.max_length > 0 ? std::min(longest, info.max_length) : longest;
}

}  // namespace slimtrain::data
