#include "slimtrain/ckpt/safetensors_header.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "slimtrain/core/error.hpp"

namespace slimtrain::ckpt {

namespace {

using nlohmann::json;

std::uint64_t little_endian_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A JSON value that is an integer >= 0, as an unsigned number; `what` names it in the error.
std::uint64_t unsigned_of(const json& v, const std::string& where, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  SLIMTRAIN_THROW(DataError, where, ": ", what, " is ", v.dump(), ", not an integer of 0 or more");
}

SafetensorsEntry entry_of(const std::string& name, const json& v, const std::string& where) {
  const std::string at = where + ": tensor '" + name + "'";
  if (!v.is_object()) SLIMTRAIN_THROW(DataError, at, ": its entry is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!v.contains(key)) SLIMTRAIN_THROW(DataError, at, ": its entry has no \"", key, "\"");
  SafetensorsEntry e;
  e.name = name;
  if (!v["dtype"].is_string()) SLIMTRAIN_THROW(DataError, at, ": dtype is not a string");
  e.dtype = v["dtype"].get<std::string>();
  if (safetensors_dtype_bits(e.dtype) == 0)
    SLIMTRAIN_THROW(DataError, at, ": unknown dtype '", e.dtype,
                    "' (safetensors has BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F4, F6_E2M3, "
                    "F6_E3M2, F8_E4M3, F8_E5M2, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, F16, BF16, "
                    "F32, F64, C64)");
  if (!v["shape"].is_array()) SLIMTRAIN_THROW(DataError, at, ": shape is not an array");
  for (const json& d : v["shape"])
    e.shape.push_back(static_cast<std::int64_t>(unsigned_of(d, at, "a dimension")));
  const json& offsets = v["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    SLIMTRAIN_THROW(DataError, at, ": data_offsets is ", offsets.dump(), ", not [begin, end]");
  e.begin = unsigned_of(offsets[0], at, "data_offsets' begin");
  e.end = unsigned_of(offsets[1], at, "data_offsets' end");
  return e;
}

// The header's JSON, every top-level name once.
json parse_json(const std::string& text, const std::string& where) {
  std::set<std::string> names;
  std::string twice;
  const json::parser_callback_t once = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && twice.empty() &&
        !names.insert(parsed.get<std::string>()).second)
      twice = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(text, once);
  } catch (const json::exception& e) {
    SLIMTRAIN_THROW(DataError, where, ": the header is not JSON (", e.what(), ")");
  }
  if (!twice.empty())
    SLIMTRAIN_THROW(DataError, where, ": tensor '", twice, "' is named twice in the header");
  return header;
}

}  // namespace

std::int64_t SafetensorsEntry::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

const SafetensorsEntry* SafetensorsHeader::find(const std::string& name) const {
  for (const SafetensorsEntry& e : tensors)
    if (e.name == name) return &e;
  return nullptr;
}

std::size_t safetensors_dtype_bits(const std::string& dtype) {
  // The reference's dtypes (0.8): sub-byte floats count in bits, a tensor of them in whole bytes.
  static const std::map<std::string, std::size_t> bits = {
      {"BOOL", 8},    {"U8", 8},          {"I8", 8},          {"F8_E4M3", 8}, {"F8_E5M2", 8},
      {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"F4", 4},      {"F6_E2M3", 6},
      {"F6_E3M2", 6}, {"U16", 16},        {"I16", 16},        {"F16", 16},    {"BF16", 16},
      {"U32", 32},    {"I32", 32},        {"F32", 32},        {"U64", 64},    {"I64", 64},
      {"F64", 64},    {"C64", 64}};
  const auto it = bits.find(dtype);
  return it == bits.end() ? 0 : it->second;
}

SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size,
                                           std::uint64_t file_size, const std::string& where) {
  if (size < 8 || file_size < 8)
    SLIMTRAIN_THROW(DataError, where, ": ", file_size,
                    " bytes, too short for a safetensors file (8 bytes of header length first)");
  SafetensorsHeader h;
  h.header_bytes = little_endian_u64(bytes);
  if (h.header_bytes > kMaxSafetensorsHeader)
    SLIMTRAIN_THROW(DataError, where, ": the header length says ", h.header_bytes,
                    " bytes, more than the 100,000,000 safetensors allows (not a safetensors "
                    "file?)");
  if (h.header_bytes > file_size - 8)
    SLIMTRAIN_THROW(DataError, where, ": the header length says ", h.header_bytes,
                    " bytes, past the end of the file (", file_size, " bytes; truncated?)");
  if (h.header_bytes > size - 8)
    SLIMTRAIN_THROW(DataError, where, ": the header is not in the bytes read");
  const std::string text(reinterpret_cast<const char*>(bytes) + 8,
                         static_cast<std::size_t>(h.header_bytes));
  if (text.empty() || text[0] != '{')
    SLIMTRAIN_THROW(DataError, where,
                    ": the header does not start with '{' (not a safetensors "
                    "file?)");
  const json header = parse_json(text, where);
  if (!header.is_object()) SLIMTRAIN_THROW(DataError, where, ": the header is not a JSON object");
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        SLIMTRAIN_THROW(DataError, where, ": __metadata__ is not an object of strings");
      for (const auto& [key, text_value] : value.items()) {
        if (!text_value.is_string())
          SLIMTRAIN_THROW(DataError, where, ": __metadata__ '", key, "' is not a string");
        h.metadata[key] = text_value.get<std::string>();
      }
      continue;
    }
    h.tensors.push_back(entry_of(name, value, where));
  }
  std::sort(h.tensors.begin(), h.tensors.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  std::uint64_t expected = 0;
  for (const SafetensorsEntry& e : h.tensors) {
    const std::string at = where + ": tensor '" + e.name + "'";
    if (e.begin != expected || e.end < e.begin)
      SLIMTRAIN_THROW(DataError, at, ": data_offsets [", e.begin, ", ", e.end, "] ",
                      e.begin < expected   ? "overlap the tensor before"
                      : e.begin > expected ? "leave a hole after the tensor before"
                                           : "end before they begin",
                      " (expected to begin at ", expected, ")");
    std::uint64_t bits = safetensors_dtype_bits(e.dtype);
    for (std::int64_t d : e.shape)
      if (__builtin_mul_overflow(bits, static_cast<std::uint64_t>(d), &bits))
        SLIMTRAIN_THROW(DataError, at, ": its shape overflows a 64-bit size");
    if (bits % 8 != 0)
      SLIMTRAIN_THROW(DataError, at, ": ", e.numel(), " elements of ", e.dtype,
                      " do not fill whole bytes");
    const std::uint64_t bytes_needed = bits / 8;
    if (e.end - e.begin != bytes_needed)
      SLIMTRAIN_THROW(DataError, at, ": ", e.end - e.begin, " bytes for a ", e.dtype, " tensor of ",
                      e.numel(), " elements (", bytes_needed, " bytes)");
    expected = e.end;
  }
  if (h.data_start() + expected != file_size)
    SLIMTRAIN_THROW(
        DataError, where, ": the tensors end at byte ", h.data_start() + expected,
        " but the file has ", file_size,
        h.data_start() + expected > file_size ? " (truncated?)" : " (bytes after them)");
  return h;
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) SLIMTRAIN_THROW(DataError, path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  std::vector<std::uint8_t> bytes(8);
  auto read_all = [&](std::uint8_t* to, std::size_t n, off_t at) {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd, to + done, n - done, at + static_cast<off_t>(done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      done += static_cast<std::size_t>(r);
    }
    return true;
  };
  try {
    if (::fstat(fd, &st) != 0)
      SLIMTRAIN_THROW(DataError, path, ": cannot stat: ", std::strerror(errno));
    const auto file_size = static_cast<std::uint64_t>(st.st_size);
    if (file_size >= 8 && read_all(bytes.data(), 8, 0)) {
      const std::uint64_t n = little_endian_u64(bytes.data());
      if (n <= kMaxSafetensorsHeader && n <= file_size - 8) {
        bytes.resize(8 + static_cast<std::size_t>(n));
        if (!read_all(bytes.data() + 8, static_cast<std::size_t>(n), 8))
          SLIMTRAIN_THROW(DataError, path, ": cannot read the header: ", std::strerror(errno));
      }
    }
    SafetensorsHeader h = parse_safetensors_header(bytes.data(), bytes.size(), file_size, path);
    ::close(fd);
    return h;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace slimtrain::ckpt
