#include "slimtrain/ckpt/verify.hpp"

#include <xxhash.h>

#include <filesystem>

#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;
using nlohmann::json;

std::string manifest_self_checksum(const json& manifest) {
  json body = manifest;
  body.erase("manifest_xxh3");
  const std::string text = body.dump();
  return files::hex64(XXH3_64bits(text.data(), text.size()));
}

namespace {

// Returns "" when the manifest is structurally sound, otherwise what is wrong with it.
std::string check_manifest_shape(const json& m) {
  if (!m.is_object()) return "is not a JSON object";
  if (m.value("format", std::string()) != kFormatName)
    return "format is not '" + std::string(kFormatName) + "'";
  if (!m.contains("version") || !m["version"].is_number_integer())
    return "has no integer 'version'";
  if (m["version"].get<int>() != kFormatVersion)
    return "has version " + m["version"].dump() + ", this build reads version " +
           std::to_string(kFormatVersion);
  if (!m.contains("manifest_xxh3") || !m["manifest_xxh3"].is_string())
    return "has no 'manifest_xxh3'";
  if (m["manifest_xxh3"].get<std::string>() != manifest_self_checksum(m))
    return "does not match its own checksum (edited or corrupted)";
  for (const char* key : {"files", "tensors", "blobs"})
    if (!m.contains(key) || !m[key].is_array()) return std::string("has no '") + key + "' list";
  if (!m.contains("step") || !m["step"].is_number_integer()) return "has no integer 'step'";
  return "";
}

VerifyDetail verify_unguarded(const std::string& dir, VerifyDepth depth) {
  VerifyDetail detail;
  detail.report.path = dir;
  auto fail = [&](const std::string& problem) {
    detail.report.ok = false;
    detail.report.problem = problem;
    return detail;
  };

  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return fail(dir + ": not a directory");
  const std::string manifest_path = dir + "/" + kManifestFile;
  if (!fs::exists(manifest_path, ec))
    return fail(manifest_path + ": missing (the write was interrupted before it finished)");
  try {
    detail.manifest = json::parse(files::read_whole_file(manifest_path));
  } catch (const json::exception& e) {
    detail.manifest = nullptr;
    return fail(manifest_path + ": not valid JSON (" + e.what() + ")");
  } catch (const Error& e) {
    return fail(e.what());
  }
  const std::string shape_problem = check_manifest_shape(detail.manifest);
  if (!shape_problem.empty()) return fail(manifest_path + ": " + shape_problem);
  const json& m = detail.manifest;

  std::string first_problem;
  for (const json& f : m["files"]) {
    FileCheck check;
    check.name = f.value("name", std::string());
    check.expected_size = f.value("size", std::uint64_t{0});
    check.expected_checksum = f.value("xxh3", std::string());
    const std::string path = dir + "/" + check.name;
    if (check.name.empty() || check.name.find('/') != std::string::npos) {
      check.status = "bad name";
    } else if (!fs::exists(path, ec)) {
      check.status = "missing";
    } else if (depth == VerifyDepth::sizes) {
      check.actual_size = fs::file_size(path, ec);
      check.actual_checksum = check.expected_checksum;
      check.status = ec                                         ? "unreadable: " + ec.message()
                     : check.actual_size != check.expected_size ? "size mismatch"
                                                                : "ok";
    } else {
      try {
        const files::FileDigest digest = files::digest_file(path);
        check.actual_size = digest.size;
        check.actual_checksum = files::hex64(digest.checksum);
        if (digest.size != check.expected_size)
          check.status = "size mismatch";
        else if (check.actual_checksum != check.expected_checksum)
          check.status = "checksum mismatch";
        else
          check.status = "ok";
      } catch (const Error& e) {
        check.status = std::string("unreadable: ") + e.what();
      }
    }
    if (check.status != "ok" && first_problem.empty()) {
      first_problem = path + ": " + check.status;
      if (check.status == "size mismatch")
        first_problem += " (manifest says " + std::to_string(check.expected_size) +
                         " bytes, file has " + std::to_string(check.actual_size) +
                         (check.actual_size < check.expected_size ? ": truncated)" : ")");
      else if (check.status == "checksum mismatch")
        first_problem +=
            " (manifest xxh3 " + check.expected_checksum + ", file " + check.actual_checksum + ")";
    }
    detail.files.push_back(std::move(check));
  }
  if (!first_problem.empty()) return fail(first_problem);

  auto listed_size = [&](const std::string& name) -> std::optional<std::uint64_t> {
    for (const FileCheck& c : detail.files)
      if (c.name == name) return c.expected_size;
    return std::nullopt;
  };
  for (const char* required : {kStateFile, kTensorsFile})
    if (!listed_size(required))
      return fail(manifest_path + ": does not list " + std::string(required));

  const std::uint64_t tensors_size = *listed_size(kTensorsFile);
  for (const json& t : m["tensors"]) {
    const std::string name = t.value("name", std::string());
    const std::string dtype = t.value("dtype", std::string());
    const auto offset = t.value("offset", std::uint64_t{0});
    const auto nbytes = t.value("nbytes", std::uint64_t{0});
    std::uint64_t numel = 1;
    if (!t.contains("shape") || !t["shape"].is_array())
      return fail(manifest_path + ": tensor '" + name + "' has no shape");
    for (const json& d : t["shape"]) numel *= d.get<std::uint64_t>();
    if (dtype_size(dtype) == 0)
      return fail(manifest_path + ": tensor '" + name + "' has unknown dtype '" + dtype + "'");
    if (numel * dtype_size(dtype) != nbytes)
      return fail(manifest_path + ": tensor '" + name + "' nbytes " + std::to_string(nbytes) +
                  " does not match its shape and dtype");
    if (offset + nbytes > tensors_size)
      return fail(manifest_path + ": tensor '" + name + "' lies outside tensors.bin");
  }
  for (const json& b : m["blobs"])
    if (!listed_size(b.value("file", std::string())))
      return fail(manifest_path + ": blob '" + b.value("name", std::string()) +
                  "' names a file the manifest does not list");

  const std::string state_path = dir + "/" + kStateFile;
  try {
    detail.state = json::parse(files::read_whole_file(state_path));
  } catch (const std::exception& e) {
    return fail(state_path + ": not valid JSON (" + e.what() + ")");
  }
  if (!detail.state.is_object() || !detail.state.contains("step") ||
      detail.state["step"] != m["step"])
    return fail(state_path + ": step does not match the manifest");
  fs::path dir_path = fs::path(dir).lexically_normal();
  if (dir_path.filename().empty()) dir_path = dir_path.parent_path();  // "step-N/" has no filename
  const auto dir_step = parse_step_dir_name(dir_path.filename().string());
  if (dir_step && *dir_step != m["step"].get<std::int64_t>())
    return fail(dir + ": directory name says step " + std::to_string(*dir_step) +
                " but the checkpoint holds step " + m["step"].dump());

  detail.report.ok = true;
  return detail;
}

}  // namespace

VerifyDetail verify_checkpoint(const std::string& dir, VerifyDepth depth) {
  // A manifest of valid JSON whose fields have other types than written ("format": 1, a shape
  // of strings) makes nlohmann::json throw type_error mid-check (found by fuzz_checkpoint): that
  // is a damaged manifest, reported as such, not an exception that escapes as a crash.
  try {
    return verify_unguarded(dir, depth);
  } catch (const nlohmann::json::exception& e) {
    VerifyDetail detail;
    detail.report.path = dir;
    detail.report.problem =
        dir + "/" + kManifestFile + ": a field has the wrong type (" + e.what() + ")";
    return detail;
  }
}

}  // namespace slimtrain::ckpt
