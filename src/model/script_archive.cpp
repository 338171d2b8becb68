#include "slimtrain/model/script_archive.hpp"

#include <caffe2/serialize/versions.h>
#include <torch/version.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;   // "PK\5\6"
constexpr std::uint32_t kZip64EndLocator = 0x07064b50;  // "PK\6\7"
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;  // "PK\1\2"
constexpr std::uint32_t kLocalHeader = 0x04034b50;     // "PK\3\4"
constexpr std::uint64_t kZip64Marker = 0xffffffffu;

std::uint64_t little_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string read_at(std::ifstream& in, std::uint64_t at, std::size_t bytes) {
  std::string out(bytes, '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(at));
  if (!in.read(out.data(), static_cast<std::streamsize>(bytes))) return "";
  return out;
}

const unsigned char* bytes_of(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// Where the central directory starts and how long it is, from the end-of-directory record (the
// zip64 one when the archive has it: LibTorch writes it for files past 4 GiB).
std::optional<std::pair<std::uint64_t, std::uint64_t>> central_directory(std::ifstream& in,
                                                                         std::uint64_t size) {
  // The record is 22 bytes plus a comment of at most 65,535: searched for from the end.
  const std::uint64_t tail = std::min<std::uint64_t>(size, 22 + 65535);
  const std::string end = read_at(in, size - tail, static_cast<std::size_t>(tail));
  if (end.size() < 22) return std::nullopt;
  for (std::size_t at = end.size() - 22 + 1; at-- > 0;) {
    const unsigned char* p = bytes_of(end) + at;
    if (little_endian(p, 4) != kEndOfDirectory) continue;
    std::uint64_t length = little_endian(p + 12, 4), offset = little_endian(p + 16, 4);
    const std::uint64_t record = size - tail + at;
    if ((offset == kZip64Marker || length == kZip64Marker) && record >= 20) {
      const std::string locator = read_at(in, record - 20, 20);
      if (locator.size() != 20 || little_endian(bytes_of(locator), 4) != kZip64EndLocator)
        return std::nullopt;
      const std::string end64 = read_at(in, little_endian(bytes_of(locator) + 8, 8), 56);
      if (end64.size() != 56 || little_endian(bytes_of(end64), 4) != kZip64EndOfDirectory)
        return std::nullopt;
      length = little_endian(bytes_of(end64) + 40, 8);
      offset = little_endian(bytes_of(end64) + 48, 8);
    }
    if (offset > size || length > size - offset) return std::nullopt;
    return std::make_pair(offset, length);
  }
  return std::nullopt;
}

// The value a zip64 extra field holds for the fields whose 32-bit header value is 0xffffffff,
// in the order the format gives: uncompressed size, compressed size, local header offset.
std::uint64_t zip64_field(const std::string& extra, int wanted, const bool present[3],
                          std::uint64_t fallback) {
  const unsigned char* p = bytes_of(extra);
  for (std::size_t at = 0; at + 4 <= extra.size();) {
    const std::uint64_t id = little_endian(p + at, 2), length = little_endian(p + at + 2, 2);
    if (id == 1) {
      std::size_t field = at + 4;
      for (int i = 0; i < 3; ++i) {
        if (!present[i]) continue;
        if (field + 8 > at + 4 + length || field + 8 > extra.size()) return fallback;
        if (i == wanted) return little_endian(p + field, 8);
        field += 8;
      }
      return fallback;
    }
    at += 4 + length;
  }
  return fallback;
}

// "aten::scaled_dot_product_attention" from TorchScript's "Unknown builtin op: NS::NAME." (or
// LibTorch's "Unknown builtin op" of an operator it has no schema for); "" when not that error.
std::string unknown_operator(const std::string& problem) {
  const std::string marker = "Unknown builtin op: ";
  const std::size_t at = problem.find(marker);
  if (at == std::string::npos) return "";
  std::string op = problem.substr(at + marker.size());
  op = op.substr(0, op.find_first_of(" \n"));
  while (!op.empty() && (op.back() == '.' || op.back() == ',')) op.pop_back();
  return op.find("::") == std::string::npos ? "" : op;
}

}  // namespace

std::optional<std::uint64_t> script_format_version(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(in.tellg());
  // Read through the central directory, whose sizes are exact: PyTorch 2.x writes its records
  // with data descriptors (the local headers' sizes are 0) and compresses its code records.
  const auto directory = central_directory(in, size);
  if (!directory) return std::nullopt;
  // A module's directory is a few KiB; one past 64 MiB is not a TorchScript archive's.
  if (directory->second > (64u << 20)) return std::nullopt;
  const std::string entries =
      read_at(in, directory->first, static_cast<std::size_t>(directory->second));
  const unsigned char* p = bytes_of(entries);
  for (std::size_t at = 0; at + 46 <= entries.size();) {
    if (little_endian(p + at, 4) != kDirectoryEntry) return std::nullopt;
    const std::uint64_t method = little_endian(p + at + 10, 2);
    const std::uint64_t stored32 = little_endian(p + at + 20, 4);
    const std::uint64_t size32 = little_endian(p + at + 24, 4);
    const std::uint64_t name_length = little_endian(p + at + 28, 2);
    const std::uint64_t extra_length = little_endian(p + at + 30, 2);
    const std::uint64_t comment_length = little_endian(p + at + 32, 2);
    const std::uint64_t offset32 = little_endian(p + at + 42, 4);
    if (at + 46 + name_length + extra_length > entries.size()) return std::nullopt;
    const std::string name = entries.substr(at + 46, name_length);
    const std::string extra = entries.substr(at + 46 + name_length, extra_length);
    at += 46 + name_length + extra_length + comment_length;
    // The archive's file format version: "<folder>/version" (".data/version", where an archive
    // has one, versions the tensors' storage, not the format).
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos || name.substr(slash) != "/version") continue;
    const bool present[3] = {size32 == kZip64Marker, stored32 == kZip64Marker,
                             offset32 == kZip64Marker};
    const std::uint64_t stored = zip64_field(extra, 1, present, stored32);
    const std::uint64_t offset = zip64_field(extra, 2, present, offset32);
    if (method != 0 || stored > 31) return std::nullopt;  // LibTorch stores it: a short number
    const std::string local = read_at(in, offset, 30);
    if (local.size() != 30 || little_endian(bytes_of(local), 4) != kLocalHeader)
      return std::nullopt;
    const std::uint64_t data = offset + 30 + little_endian(bytes_of(local) + 26, 2) +
                               little_endian(bytes_of(local) + 28, 2);
    const std::string text = read_at(in, data, static_cast<std::size_t>(stored));
    try {
      return static_cast<std::uint64_t>(std::stoull(text));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

void throw_unloadable(const std::string& path, const std::string& problem) {
  const std::string who = "--model torchscript:" + path;
  const std::uint64_t newest = caffe2::serialize::kMaxSupportedFileFormatVersion;
  const std::string torch_version = TORCH_VERSION;
  const auto version = script_format_version(path);
  if (!version)
    SLIMTRAIN_THROW(DataError, who,
                    ": not a TorchScript module (write one with torch.jit.script(model).save(path)"
                    "): ",
                    problem);
  if (*version > newest)
    SLIMTRAIN_THROW(DataError, who, ": saved by a newer PyTorch than this LibTorch ", torch_version,
                    ": file format version ", *version, ", this LibTorch reads versions up to ",
                    newest, "; save the module with PyTorch ", torch_version,
                    " or build slimtrain against a newer LibTorch");
  const std::string op = unknown_operator(problem);
  if (!op.empty() && (op.rfind("aten::", 0) == 0 || op.rfind("prim::", 0) == 0))
    SLIMTRAIN_THROW(
        DataError, who, ": uses ", op, ", an operator LibTorch ", torch_version,
        " does not have (the module was saved by a newer PyTorch: save it with PyTorch ",
        torch_version,
        ", or build slimtrain against the LibTorch of the PyTorch that "
        "saved it, INSTALL.md)");
  if (!op.empty())
    SLIMTRAIN_THROW(DataError, who, ": uses ", op, ", an operator of another library (",
                    op.substr(0, op.find("::")), "): LibTorch ", torch_version,
                    " has only its own operators; write the model without it");
  const bool unknown =
      problem.find("Unknown") != std::string::npos || problem.find("unknown") != std::string::npos;
  SLIMTRAIN_THROW(DataError, who, ": a TorchScript archive (file format version ", *version,
                  ") that LibTorch ", torch_version, " cannot load",
                  unknown ? " (a type it does not know: a module saved by a newer PyTorch can use "
                            "those; save it with PyTorch " +
                                torch_version + ")"
                          : std::string(),
                  ": ", problem);
}

}  // namespace slimtrain::model
