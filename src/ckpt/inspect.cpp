#include "slimtrain/ckpt/inspect.hpp"

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/verify.hpp"
#include "slimtrain/core/file_io.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A run directory or its checkpoints/ directory stands for the checkpoint `latest` names.
std::string resolve(const std::string& path) {
  std::error_code ec;
  if (fs::exists(fs::path(path) / kManifestFile, ec)) return path;
  for (const std::string& dir : {checkpoints_dir(path), path}) {
    if (!fs::exists(fs::path(dir) / kLatestFile, ec)) continue;
    if (const auto latest = read_latest_pointer(dir)) return *latest;
  }
  return path;
}

std::string summarize_meta(const json& meta) {
  if (!meta.is_object() || meta.empty()) return "(none)";
  std::string text;
  for (const auto& [key, value] : meta.items()) {
    if (key == "optimizer_shards") continue;  // its own section
    std::string shown = value.dump();
    if (shown.size() > 120) shown = shown.substr(0, 117) + "...";
    text += "\n  " + key + ": " + shown;
  }
  return text;
}

// Which rank's file holds which elements of the optimizer state (optimizer_shards.hpp).
std::string describe_shards(const json& shards) {
  if (!shards.is_object()) return "";
  const json files = shards.value("files", json::array());
  std::string text =
      "optimizer   " + shards.value("optimizer", std::string("?")) +
      " state by element: " + std::to_string(shards.value("elements", 0)) + " elements in " +
      std::to_string(files.size()) + " file" + (files.size() == 1 ? "" : "s") + ", written at " +
      std::to_string(shards.value("world_size", 0)) + " rank(s) with --shard " +
      shards.value("shard", std::string("?")) + "; resumes at any world size and --shard\n";
  for (const json& f : files) {
    std::int64_t elements = 0;
    const json ranges = f.value("ranges", json::array());
    for (const json& r : ranges)
      if (r.is_array() && r.size() == 2) elements += r[1].get<std::int64_t>();
    text += "  " + f.value("file", std::string("?")) + ": " + std::to_string(elements) +
            " elements in " + std::to_string(ranges.size()) + " range" +
            (ranges.size() == 1 ? "" : "s") + "\n";
  }
  return text;
}

}  // namespace

bool is_checkpoint_path(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  return fs::exists(p / kManifestFile, ec) || fs::exists(p / kLatestFile, ec) ||
         fs::exists(p / "checkpoints", ec) ||
         parse_step_dir_name(p.lexically_normal().filename().string()).has_value();
}

int inspect_checkpoint(const std::string& path, bool as_json) {
  const std::string dir = resolve(path);
  const VerifyDetail detail = verify_checkpoint(dir);
  const json& m = detail.manifest;
  json s = detail.state;
  if (!s.is_object()) {
    // Verification stops at the first problem; still show the counters when state.json parses.
    try {
      s = json::parse(files::read_whole_file(dir + "/" + kStateFile));
    } catch (const std::exception&) {
      s = nullptr;
    }
  }

  std::uint64_t tensor_bytes = 0;
  std::size_t tensor_count = 0;
  if (m.is_object() && m.contains("tensors") && m["tensors"].is_array()) {
    tensor_count = m["tensors"].size();
    for (const json& t : m["tensors"]) tensor_bytes += t.value("nbytes", std::uint64_t{0});
  }

  if (as_json) {
    json out = {{"path", dir},
                {"verified", detail.report.ok},
                {"problem", detail.report.problem},
                {"tensors", tensor_count},
                {"tensor_bytes", tensor_bytes}};
    if (s.is_object())
      for (const char* key : {"step", "epoch", "epoch_step", "meta", "retention_metric"})
        if (s.contains(key)) out[key] = s[key];
    json files = json::array();
    for (const FileCheck& f : detail.files)
      files.push_back({{"name", f.name},
                       {"size", f.expected_size},
                       {"xxh3", f.expected_checksum},
                       {"status", f.status}});
    out["files"] = files;
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "checkpoint  " << dir << "\n";
    if (m.is_object())
      std::cout << "format      " << m.value("format", std::string("?")) << " v"
                << m.value("version", 0) << "\n";
    if (s.is_object()) {
      std::cout << "step        " << s.value("step", json()).dump() << "\n"
                << "epoch       " << s.value("epoch", json()).dump()
                << " (steps taken in it: " << s.value("epoch_step", json()).dump() << ")\n";
      if (s.contains("retention_metric") && !s["retention_metric"].is_null())
        std::cout << "metric      " << s["retention_metric"].dump() << "\n";
      std::cout << "meta        " << summarize_meta(s.value("meta", json())) << "\n";
      const json meta = s.value("meta", json());
      if (meta.is_object() && meta.contains("optimizer_shards"))
        std::cout << describe_shards(meta["optimizer_shards"]);
    }
    if (m.is_object()) {
      std::cout << "tensors     " << tensor_count << " (" << tensor_bytes << " bytes)\n";
      if (m.contains("blobs") && m["blobs"].is_array())
        for (const json& b : m["blobs"])
          std::cout << "blob        " << b.value("name", std::string()) << " ("
                    << b.value("file", std::string()) << ")\n";
    }
    if (!detail.files.empty()) std::cout << "files\n";
    for (const FileCheck& f : detail.files)
      std::cout << "  " << std::left << std::setw(24) << f.name << std::right << std::setw(12)
                << f.expected_size << " bytes  xxh3 " << f.expected_checksum << "  " << f.status
                << "\n";
    std::cout << (detail.report.ok ? "verified" : "NOT VERIFIED: " + detail.report.problem) << "\n";
  }
  if (!detail.report.ok) {
    std::cerr << "slimtrain inspect: checkpoint does not verify: " << detail.report.problem << "\n";
    return 2;
  }
  return 0;
}

}  // namespace slimtrain::ckpt
