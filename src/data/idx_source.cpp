#include "slimtrain/data/idx_source.hpp"

#include <cstring>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/input_file.hpp"

namespace slimtrain::data {

IdxArray parse_idx(const std::uint8_t* bytes, std::size_t size, const std::string& name) {
  if (size < 4)
    SLIMTRAIN_THROW(DataError, name, ": truncated IDX file: ", size, " bytes, no header");
  if (bytes[0] != 0 || bytes[1] != 0) {
    SLIMTRAIN_THROW(DataError, name, ": not an IDX file: wrong magic (first bytes 0x", std::hex,
                    int(bytes[0]), " 0x", int(bytes[1]), ", expected 0x0 0x0)");
  }
  if (bytes[2] != 0x08) {
    SLIMTRAIN_THROW(DataError, name, ": unsupported IDX element type 0x", std::hex, int(bytes[2]),
                    " (only unsigned byte, 0x08, is supported)");
  }
  const int rank = bytes[3];
  if (rank < 1 || rank > 4)
    SLIMTRAIN_THROW(DataError, name, ": IDX rank ", rank, " is not in [1, 4]");
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(rank);
  if (size < header) {
    SLIMTRAIN_THROW(DataError, name, ": truncated IDX header: ", size, " bytes, expected ", header);
  }
  IdxArray out;
  std::uint64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    const std::uint8_t* p = bytes + 4 + 4 * d;
    std::uint32_t v = (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) |
                      (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
    out.dims.push_back(v);
    total *= v;
    if (total > (std::uint64_t(1) << 40))
      SLIMTRAIN_THROW(DataError, name, ": IDX dimensions are implausibly large");
  }
  // A zero count would hide absurd sample dimensions from the total: bound one sample too.
  std::uint64_t per_sample = 1;
  for (std::size_t d = 1; d < out.dims.size(); ++d) {
    per_sample *= static_cast<std::uint64_t>(out.dims[d]);
    if (per_sample > (std::uint64_t(1) << 31)) {
      SLIMTRAIN_THROW(DataError, name,
                      ": IDX sample dimensions are implausibly large (over 2 GiB per sample)");
    }
  }
  const std::uint64_t payload = size - header;
  if (payload < total) {
    const std::uint64_t per_record = out.dims[0] ? total / out.dims[0] : 1;
    SLIMTRAIN_THROW(DataError, name, ": truncated IDX file: dimensions need ", total,
                    " data bytes, found ", payload, " (it ends inside record ",
                    per_record ? payload / per_record : 0, ")");
  }
  if (payload > total) {
    SLIMTRAIN_THROW(DataError, name, ": IDX file has ", payload - total,
                    " bytes beyond the data its dimensions describe");
  }
  out.data = bytes + header;
  return out;
}

IdxSource::IdxSource(const std::string& images_path, const std::string& labels_path)
    : IdxSource(open_input(images_path), images_path, open_input(labels_path), labels_path) {}

IdxSource::IdxSource(InputBytes images, std::string images_name, InputBytes labels,
                     std::string labels_name)
    : images_bytes_(std::move(images)),
      labels_bytes_(std::move(labels)),
      images_name_(std::move(images_name)),
      labels_name_(std::move(labels_name)) {
  parse();
}

void IdxSource::parse() {
  images_ = parse_idx(images_bytes_.data(), images_bytes_.size(), images_name_);
  labels_ = parse_idx(labels_bytes_.data(), labels_bytes_.size(), labels_name_);
  if (images_.dims.size() != 3) {
    SLIMTRAIN_THROW(DataError, images_name_,
                    ": IDX images must have 3 dimensions [N, H, W], found ", images_.dims.size());
  }
  if (labels_.dims.size() != 1) {
    SLIMTRAIN_THROW(DataError, labels_name_, ": IDX labels must have 1 dimension [N], found ",
                    labels_.dims.size());
  }
  if (images_.dims[0] != labels_.dims[0]) {
    SLIMTRAIN_THROW(DataError, images_name_, " holds ", images_.dims[0], " images but ",
                    labels_name_, " holds ", labels_.dims[0], " labels");
  }
  if (images_.dims[1] == 0 || images_.dims[2] == 0) {
    SLIMTRAIN_THROW(DataError, images_name_, ": IDX images have an empty dimension (",
                    images_.dims[1], " x ", images_.dims[2], ")");
  }
  count_ = images_.dims[0];
  shape_ = {images_.dims[1], images_.dims[2]};
}

std::int64_t IdxSource::read(std::int64_t i, void* x) const {
  const std::int64_t n = shape_[0] * shape_[1];
  std::memcpy(x, images_.data + i * n, static_cast<std::size_t>(n));
  return labels_.data[i];
}

}  // namespace slimtrain::data
