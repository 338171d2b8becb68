#include "slimtrain/cli/prep_ragged.hpp"

#include "slimtrain/core/check_hdf5.hpp"

namespace slimtrain::cli {

void place_counts(comm::ControlPlane& control, const std::vector<std::int64_t>& counts,
                  std::vector<data::Range>& mine, std::vector<std::int64_t>& totals) {
  const std::size_t k = counts.size();
  const std::vector<std::int64_t> all = control.all_gather(counts);
  mine.assign(k, data::Range{0, 0});
  totals.assign(k, 0);
  for (int r = 0; r < control.size(); ++r)
    for (std::size_t i = 0; i < k; ++i) {
      const std::int64_t n = all[static_cast<std::size_t>(r) * k + i];
      if (r == control.rank()) mine[i] = {totals[i], totals[i] + n};
      totals[i] += n;
    }
}

data::Hid write_ragged(hid_t inputs, const char* name, hid_t file_type, hid_t memory_type,
                       std::size_t element, const void* values, const data::Range& values_at,
                       std::int64_t total_values, const std::vector<std::int64_t>& lengths,
                       const data::Range& rows_at, std::int64_t total_rows, const RowWriter& rows,
                       bool first_rank) {
  data::Hid group(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(inputs, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), rows.where()));
  data::Hid value_set =
      rows.create(group, "values", file_type, {static_cast<hsize_t>(total_values)}, element);
  rows.write_rows(value_set, memory_type, values_at.begin, values_at.end - values_at.begin, values);
  // Offsets [N+1]: each rank writes the ends of its samples, the first rank also the leading 0.
  std::vector<std::int64_t> offsets;
  if (first_rank) offsets.push_back(0);
  std::int64_t end = values_at.begin;
  for (std::int64_t n : lengths) offsets.push_back(end += n);
  data::Hid offset_set = rows.create(group, "offsets", H5T_STD_I64LE,
                                     {static_cast<hsize_t>(total_rows + 1)}, sizeof(std::int64_t));
  rows.write_rows(offset_set, H5T_NATIVE_INT64, first_rank ? 0 : rows_at.begin + 1,
                  static_cast<std::int64_t>(offsets.size()), offsets.data());
  return group;
}

}  // namespace slimtrain::cli
