#include "slimtrain/ckpt/rank_files.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;

namespace {
constexpr const char* kStagingPrefix = ".shards-";
}

std::string staging_dir(const std::string& checkpoints_dir, std::int64_t step) {
  return checkpoints_dir + "/" + kStagingPrefix + step_dir_name(step);
}

void stage_rank_file(const std::string& checkpoints_dir, std::int64_t step, const std::string& name,
                     const std::function<void(files::DurableFile&)>& write) {
  const std::string dir = staging_dir(checkpoints_dir, step);
  files::make_directories(dir);
  const std::string path = dir + "/" + name;
  files::remove_tree(path + ".part");  // a retry of the same step
  files::DurableFile data(path + ".part");
  write(data);
  data.commit();
  files::remove_tree(path + ".sum");
  files::DurableFile sum(path + ".sum");
  sum.write(nlohmann::json{{"size", data.size()}, {"xxh3", files::hex64(data.checksum())}}.dump());
  sum.commit();
  files::rename_checked(path + ".part", path);
  files::fsync_directory(dir);
}

std::vector<nlohmann::json> collect_rank_files(const std::string& checkpoints_dir,
                                               std::int64_t step,
                                               const std::vector<std::string>& names,
                                               const std::string& into, double timeout_s) {
  const std::string dir = staging_dir(checkpoints_dir, step);
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(timeout_s));
  std::vector<nlohmann::json> records;
  for (const std::string& name : names) {
    std::error_code ec;
    while (!fs::exists(dir + "/" + name, ec)) {
      if (std::chrono::steady_clock::now() > until) {
        std::string missing;
        for (const std::string& n : names)
          if (!fs::exists(dir + "/" + n, ec)) missing += (missing.empty() ? "" : ", ") + n;
        SLIMTRAIN_THROW(Error, "checkpoint of step ", step, ": ", missing, " never arrived in ",
                        dir, " within ", timeout_s,
                        " s (the rank writing it failed, or the file system is not shared)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    nlohmann::json sum;
    try {
      sum = nlohmann::json::parse(files::read_whole_file(dir + "/" + name + ".sum"));
    } catch (const nlohmann::json::exception& e) {
      SLIMTRAIN_THROW(Error, dir, "/", name, ".sum: ", e.what());
    }
    files::rename_checked(dir + "/" + name, into + "/" + name);
    records.push_back({{"name", name}, {"size", sum.at("size")}, {"xxh3", sum.at("xxh3")}});
  }
  return records;
}

void remove_staging(const std::string& checkpoints_dir, std::int64_t keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kStagingPrefix, 0) != 0) continue;
    const auto step = parse_step_dir_name(name.substr(std::string(kStagingPrefix).size()));
    if (step && *step == keep) continue;
    if (!files::remove_tree(entry.path().string()))
      log::warn("checkpoint: could not remove ", entry.path().string());
  }
}

}  // namespace slimtrain::ckpt
