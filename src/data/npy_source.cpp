#include "slimtrain/data/npy_source.hpp"

#include <cmath>
#include <cstring>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/input_file.hpp"

namespace slimtrain::data {
namespace {

// The value text after "'key':" in the header dict, up to the matching delimiter.
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& name) {
  const std::size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) SLIMTRAIN_THROW(DataError, name, ": .npy header lacks '", key, "'");
  std::size_t p = header.find(':', k);
  if (p == std::string::npos) SLIMTRAIN_THROW(DataError, name, ": malformed .npy header");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) SLIMTRAIN_THROW(DataError, name, ": malformed .npy header");
  const char open = header[p];
  if (open == '\'' || open == '"') {
    const std::size_t close = header.find(open, p + 1);
    if (close == std::string::npos) SLIMTRAIN_THROW(DataError, name, ": malformed .npy header");
    return header.substr(p + 1, close - p - 1);
  }
  if (open == '(') {
    const std::size_t close = header.find(')', p);
    if (close == std::string::npos) SLIMTRAIN_THROW(DataError, name, ": malformed .npy header");
    return header.substr(p, close - p + 1);
  }
  std::size_t end = p;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(p, end - p);
}

std::uint64_t read_le(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

NpyArray parse_npy(const std::uint8_t* bytes, std::size_t size, const std::string& name) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) {
    SLIMTRAIN_THROW(DataError, name, ": not a .npy file (wrong magic)");
  }
  const int major = bytes[6];
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = read_le(bytes + 8, 2);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) SLIMTRAIN_THROW(DataError, name, ": truncated .npy header");
    header_len = read_le(bytes + 8, 4);
    offset = 12;
  } else {
    SLIMTRAIN_THROW(DataError, name, ": unsupported .npy format version ", major);
  }
  if (header_len > size - offset) SLIMTRAIN_THROW(DataError, name, ": truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(bytes + offset), header_len);

  const std::string descr = header_value(header, "descr", name);
  if (descr.size() < 3) SLIMTRAIN_THROW(DataError, name, ": unsupported .npy dtype '", descr, "'");
  const char order = descr[0];
  NpyArray out;
  out.kind = descr[1];
  const std::string width = descr.substr(2);
  out.item_size =
      (width == "1" || width == "2" || width == "4" || width == "8") ? width[0] - '0' : 0;
  const bool endian_ok = order == '<' || (order == '|' && out.item_size == 1);
  if (!endian_ok || out.item_size == 0 || (out.kind != 'u' && out.kind != 'i' && out.kind != 'f') ||
      (out.kind == 'f' && out.item_size < 4)) {
    SLIMTRAIN_THROW(DataError, name, ": unsupported .npy dtype '", descr,
                    "' (need little-endian integers or float32/float64)");
  }
  const std::string fortran = header_value(header, "fortran_order", name);
  if (fortran.rfind("True", 0) == 0) {
    SLIMTRAIN_THROW(DataError, name,
                    ": Fortran-order .npy arrays are not supported; save with "
                    "numpy.ascontiguousarray first");
  }
  if (fortran.rfind("False", 0) != 0)
    SLIMTRAIN_THROW(DataError, name, ": malformed .npy header (fortran_order)");

  const std::string shape = header_value(header, "shape", name);
  if (shape.empty() || shape.front() != '(')
    SLIMTRAIN_THROW(DataError, name, ": malformed .npy shape '", shape, "'");
  std::uint64_t total = 1, per_sample = 1;
  std::size_t p = 1;
  while (p < shape.size()) {
    while (p < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p >= shape.size() || shape[p] == ')') break;
    std::uint64_t v = 0;
    bool digits = false;
    while (p < shape.size() && shape[p] >= '0' && shape[p] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(shape[p++] - '0');
      digits = true;
      if (v > (std::uint64_t(1) << 40))
        SLIMTRAIN_THROW(DataError, name, ": .npy shape is implausibly large");
    }
    if (!digits) SLIMTRAIN_THROW(DataError, name, ": malformed .npy shape '", shape, "'");
    out.shape.push_back(static_cast<std::int64_t>(v));
    total *= v;
    per_sample *= out.shape.size() > 1 ? v : 1;
    if (per_sample > (std::uint64_t(1) << 31)) {
      SLIMTRAIN_THROW(DataError, name,
                      ": .npy sample dimensions are implausibly large (over 2 GiB per sample)");
    }
    if (total > (std::uint64_t(1) << 40) || out.shape.size() > 8) {
      SLIMTRAIN_THROW(DataError, name, ": .npy shape is implausibly large");
    }
  }
  const std::size_t data_offset = offset + header_len;
  const std::uint64_t need = total * static_cast<std::uint64_t>(out.item_size);
  if (size - data_offset < need) {
    SLIMTRAIN_THROW(DataError, name, ": truncated .npy data: shape ", shape, " needs ", need,
                    " bytes, found ", size - data_offset);
  }
  out.data = bytes + data_offset;
  return out;
}

NpySource::NpySource(const std::string& x_path, const std::string& y_path)
    : NpySource(open_input(x_path), x_path, open_input(y_path), y_path) {}

NpySource::NpySource(InputBytes x, std::string x_name, InputBytes y, std::string y_name)
    : x_bytes_(std::move(x)),
      y_bytes_(std::move(y)),
      x_name_(std::move(x_name)),
      y_name_(std::move(y_name)) {
  parse();
}

void NpySource::parse() {
  x_ = parse_npy(x_bytes_.data(), x_bytes_.size(), x_name_);
  y_ = parse_npy(y_bytes_.data(), y_bytes_.size(), y_name_);
  const bool x_ok = (x_.kind == 'u' && x_.item_size == 1) ||
                    (x_.kind == 'i' && x_.item_size == 8) || x_.kind == 'f';
  if (!x_ok) {
    SLIMTRAIN_THROW(DataError, x_name_, ": unsupported feature dtype ", x_.kind, x_.item_size,
                    " (features must be u1, i8, f4 or f8)");
  }
  if (y_.kind == 'f')
    SLIMTRAIN_THROW(DataError, y_name_, ": labels must be integers, found float", 8 * y_.item_size);
  if (x_.shape.size() < 2 || x_.shape.size() > 4) {
    SLIMTRAIN_THROW(DataError, x_name_, ": features must have 2 to 4 dimensions [N, ...], found ",
                    x_.shape.size());
  }
  if (y_.shape.size() != 1)
    SLIMTRAIN_THROW(DataError, y_name_, ": labels must have shape [N], found ", y_.shape.size(),
                    " dimensions");
  if (x_.shape[0] != y_.shape[0]) {
    SLIMTRAIN_THROW(DataError, x_name_, " holds ", x_.shape[0], " samples but ", y_name_, " holds ",
                    y_.shape[0], " labels");
  }
  for (std::size_t d = 1; d < x_.shape.size(); ++d) {
    if (x_.shape[d] == 0)
      SLIMTRAIN_THROW(DataError, x_name_, ": features have an empty dimension ", d);
  }
  count_ = x_.shape[0];
  shape_.assign(x_.shape.begin() + 1, x_.shape.end());
  type_ = x_.kind == 'u' ? ElementType::kUint8 : ElementType::kFloat32;
}

std::int64_t NpySource::read(std::int64_t i, void* x) const {
  const std::int64_t n = sample_elements();
  const std::uint8_t* src = x_.data + static_cast<std::size_t>(i * n * x_.item_size);
  if (type_ == ElementType::kUint8) {
    std::memcpy(x, src, static_cast<std::size_t>(n));
  } else {
    float* out = static_cast<float*>(x);
    for (std::int64_t k = 0; k < n; ++k) {
      const std::uint8_t* e = src + k * x_.item_size;
      float f;
      if (x_.kind == 'f' && x_.item_size == 4) {
        std::memcpy(&f, e, 4);
      } else if (x_.kind == 'f') {
        double d;
        std::memcpy(&d, e, 8);
        f = static_cast<float>(d);
      } else {
        std::int64_t v;
        std::memcpy(&v, e, 8);
        f = static_cast<float>(v);
      }
      if (!std::isfinite(f)) {
        SLIMTRAIN_THROW(DataError, x_name_, ": sample ", i, ", element ", k,
                        " is NaN or infinite (or overflows float32)");
      }
      out[k] = f;
    }
  }
  const std::uint8_t* label_bytes = y_.data + static_cast<std::size_t>(i * y_.item_size);
  std::uint64_t raw = read_le(label_bytes, y_.item_size);
  std::int64_t label;
  if (y_.kind == 'i' && y_.item_size < 8 && (raw >> (8 * y_.item_size - 1)) & 1) {
    label = static_cast<std::int64_t>(raw | (~std::uint64_t(0) << (8 * y_.item_size)));
  } else {
    label = static_cast<std::int64_t>(raw);
  }
  if (label < 0)
    SLIMTRAIN_THROW(DataError, y_name_, ": label of sample ", i, " is ", label, " (negative)");
  return label;
}

}  // namespace slimtrain::data
