#include "slimtrain/ckpt/retention.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;

void validate(const RetentionPolicy& policy) {
  if (policy.keep_last < 1)
    SLIMTRAIN_THROW(ConfigError, "--keep-last: ", policy.keep_last,
                    " would delete the checkpoint just written; it must be >= 1");
}

namespace {

std::optional<double> stored_metric(const std::string& dir) {
  try {
    const auto state = nlohmann::json::parse(files::read_whole_file(dir + "/" + kStateFile));
    const auto& m = state.at("retention_metric");
    if (m.is_number()) return m.get<double>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> apply_retention(const std::string& checkpoints,
                                         const RetentionPolicy& policy) {
  validate(policy);
  std::map<std::int64_t, std::string> complete;  // step -> directory name, oldest first
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoints, ec)) {
    const std::string name = entry.path().filename().string();
    const auto step = parse_step_dir_name(name);
    if (step && fs::exists(entry.path() / kManifestFile, ec)) complete[*step] = name;
  }

  std::set<std::string> keep;
  int kept_recent = 0;
  for (auto it = complete.rbegin(); it != complete.rend() && kept_recent < policy.keep_last;
       ++it, ++kept_recent)
    keep.insert(it->second);
  if (!policy.best_metric.empty()) {
    std::optional<std::pair<double, std::string>> best;
    for (const auto& [step, name] : complete) {
      const auto metric = stored_metric(checkpoints + "/" + name);
      if (!metric) continue;
      const bool better =
          !best || (policy.higher_is_better ? *metric >= best->first : *metric <= best->first);
      if (better) best = std::make_pair(*metric, name);  // ties go to the newer checkpoint
    }
    if (best) keep.insert(best->second);
  }
  if (const auto latest = read_latest_pointer(checkpoints))
    keep.insert(fs::path(*latest).filename().string());

  std::vector<std::string> removed;
  for (const auto& [step, name] : complete) {
    if (keep.count(name)) continue;
    const std::string path = checkpoints + "/" + name;
    const std::string doomed =
        checkpoints + "/.tmp-delete-" + name + "-" + std::to_string(::getpid());
    try {
      files::rename_checked(path, doomed);
    } catch (const Error& e) {
      log::warn("checkpoint retention: ", e.what());
      continue;
    }
    if (!files::remove_tree(doomed))
      log::warn("checkpoint retention: could not fully remove ", doomed);
    removed.push_back(path);
  }
  if (!removed.empty()) {
    try {
      files::fsync_directory(checkpoints);
    } catch (const Error& e) {
      log::warn("checkpoint retention: ", e.what());
    }
  }
  return removed;
}

}  // namespace slimtrain::ckpt
