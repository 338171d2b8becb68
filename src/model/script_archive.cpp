#include "slimtrain/model/script_archive.hpp"

#include <caffe2/serialize/versions.h>
#include <torch/version.h>

#include <array>
#include <cstring>
#include <fstream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {
namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;  // "PK\3\4"
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::uint32_t kZip64Marker = 0xffffffffu;

std::uint64_t little_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A record's stored size, from its zip64 extra field when the header says 0xffffffff.
std::uint64_t stored_size(std::uint64_t header_size, const std::string& extra) {
  if (header_size != kZip64Marker) return header_size;
  const auto* p = reinterpret_cast<const unsigned char*>(extra.data());
  for (std::size_t at = 0; at + 4 <= extra.size();) {
    const std::uint64_t id = little_endian(p + at, 2);
    const std::uint64_t length = little_endian(p + at + 2, 2);
    // zip64: uncompressed size, then compressed size (records are stored, so either will do).
    if (id == 1 && length >= 16 && at + 4 + 16 <= extra.size())
      return little_endian(p + at + 12, 8);
    at += 4 + length;
  }
  return header_size;
}

}  // namespace

std::optional<std::uint64_t> script_format_version(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  // A module's version record is short; a scan that finds none in the first 100,000 records is
  // not reading a TorchScript archive.
  for (int record = 0; in && record < 100000; ++record) {
    std::array<unsigned char, kLocalHeaderBytes> h{};
    if (!in.read(reinterpret_cast<char*>(h.data()), h.size())) return std::nullopt;
    if (little_endian(h.data(), 4) != kLocalHeader) return std::nullopt;
    const std::uint64_t size = little_endian(h.data() + 18, 4);
    std::string name(little_endian(h.data() + 26, 2), '\0');
    std::string extra(little_endian(h.data() + 28, 2), '\0');
    if (!in.read(name.data(), static_cast<std::streamsize>(name.size())) ||
        !in.read(extra.data(), static_cast<std::streamsize>(extra.size())))
      return std::nullopt;
    const std::uint64_t bytes = stored_size(size, extra);
    const std::size_t slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash) == "/version" && bytes < 32) {
      std::string text(bytes, '\0');
      if (!in.read(text.data(), static_cast<std::streamsize>(bytes))) return std::nullopt;
      try {
        std::size_t used = 0;
        const unsigned long long v = std::stoull(text, &used);
        return static_cast<std::uint64_t>(v);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    in.seekg(static_cast<std::streamoff>(bytes), std::ios::cur);
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
  const bool unknown =
      problem.find("Unknown") != std::string::npos || problem.find("unknown") != std::string::npos;
  SLIMTRAIN_THROW(DataError, who, ": a TorchScript archive (file format version ", *version,
                  ") that LibTorch ", torch_version, " cannot load",
                  unknown ? " (an operator or type it does not know: a module saved by a newer "
                            "PyTorch can use those; save it with PyTorch " +
                                torch_version + ")"
                          : std::string(),
                  ": ", problem);
}

}  // namespace slimtrain::model
