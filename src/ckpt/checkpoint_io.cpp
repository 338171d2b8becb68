#include "slimtrain/ckpt/checkpoint_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>

#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/rank_files.hpp"
#include "slimtrain/ckpt/verify.hpp"
#include "slimtrain/core/dtype_name.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;
using nlohmann::json;

std::string dtype_name(torch::ScalarType type) {
  std::string name = slimtrain::dtype_name(type);
  if (name.empty())
    SLIMTRAIN_THROW(Error, "checkpoint format has no dtype for torch type ", c10::toString(type));
  return name;
}

torch::ScalarType scalar_type_from_name(const std::string& name, const std::string& context) {
  static const std::map<std::string, torch::ScalarType> types = {
      {"float64", torch::kFloat64},   {"float32", torch::kFloat32}, {"float16", torch::kFloat16},
      {"bfloat16", torch::kBFloat16}, {"int64", torch::kInt64},     {"int32", torch::kInt32},
      {"int16", torch::kInt16},       {"int8", torch::kInt8},       {"uint8", torch::kUInt8},
      {"bool", torch::kBool}};
  const auto it = types.find(name);
  if (it == types.end()) SLIMTRAIN_THROW(DataError, context, ": unknown dtype '", name, "'");
  return it->second;
}

namespace {

constexpr const char* kTmpPrefix = ".tmp-";

// Leftovers of an interrupted write or deletion; nothing else ever uses the .tmp- prefix.
void remove_stale_entries(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTmpPrefix, 0) != 0) continue;
    log::info("checkpoint: removing stale ", entry.path().string(),
              " left by an interrupted write");
    if (!files::remove_tree(entry.path().string()))
      log::warn("checkpoint: could not remove stale ", entry.path().string());
  }
}

// Removes the temporary directory unless released: every error path leaves no partial checkpoint.
class TmpDirGuard {
 public:
  explicit TmpDirGuard(std::string path) : path_(std::move(path)) {}
  ~TmpDirGuard() {
    if (!path_.empty() && !files::remove_tree(path_))
      log::warn("checkpoint: could not remove temporary ", path_);
  }
  TmpDirGuard(const TmpDirGuard&) = delete;
  TmpDirGuard& operator=(const TmpDirGuard&) = delete;
  void release() { path_.clear(); }

 private:
  std::string path_;
};

json file_record(const files::DurableFile& file, const std::string& name) {
  return {{"name", name}, {"size", file.size()}, {"xxh3", files::hex64(file.checksum())}};
}

void write_latest(const std::string& checkpoints, const std::string& target_name) {
  const std::string tmp = checkpoints + "/" + kTmpPrefix + "latest-" + std::to_string(::getpid());
  try {
    files::DurableFile file(tmp);
    file.write(target_name + "\n");
    file.commit();
    crash_point("after-latest-tmp");
    files::rename_checked(tmp, checkpoints + "/" + kLatestFile);
  } catch (...) {
    files::remove_tree(tmp);
    throw;
  }
  files::fsync_directory(checkpoints);
  crash_point("after-latest");
}

}  // namespace

std::string write_checkpoint(const std::string& checkpoints, const CheckpointState& state,
                             std::optional<double> metric) {
  if (state.step < 0)
    SLIMTRAIN_THROW(ConfigError, "checkpoint step must be >= 0, got ", state.step);
  std::error_code ec;
  if (!fs::is_directory(checkpoints, ec)) {
    files::make_directories(checkpoints);
    // The new directory's own entry must survive a power loss too.
    files::fsync_directory(fs::path(checkpoints).parent_path().string());
  }
  remove_stale_entries(checkpoints);
  remove_staging(checkpoints, state.step);  // other steps': left by a rank that died

  const std::string name = step_dir_name(state.step);
  const std::string final_dir = checkpoints + "/" + name;
  const std::string tmp = checkpoints + "/" + kTmpPrefix + name + "-" + std::to_string(::getpid());
  if (::mkdir(tmp.c_str(), 0755) != 0)
    SLIMTRAIN_THROW(Error, "cannot create checkpoint directory ", tmp, ": ", std::strerror(errno));
  TmpDirGuard guard(tmp);
  crash_point("after-tmpdir");

  json files = json::array();
  json tensors = json::array();
  json blobs = json::array();
  // Tensors made from other ranks' files need those files here first; the others are waited for
  // after the blobs, as the writes of every rank run meanwhile.
  std::vector<std::string> early = state.source_files;
  if (!early.empty()) early.insert(early.end(), state.rank_files.begin(), state.rank_files.end());
  std::vector<json> collected =
      collect_rank_files(checkpoints, state.step, early, tmp, state.rank_files_timeout_s);
  {
    files::DurableFile out(tmp + "/" + kTensorsFile);
    std::set<std::string> seen;
    std::uint64_t offset = 0;
    for (const TensorEntry& entry : state.tensors) {
      if (entry.name.empty()) SLIMTRAIN_THROW(ConfigError, "checkpoint tensor with an empty name");
      if (!seen.insert(entry.name).second)
        SLIMTRAIN_THROW(ConfigError, "checkpoint tensor name '", entry.name, "' appears twice");
      const torch::Tensor made = entry.produce ? entry.produce(tmp) : entry.tensor;
      if (!made.defined())
        SLIMTRAIN_THROW(ConfigError, "checkpoint tensor '", entry.name, "' is undefined");
      if (!made.device().is_cpu())
        SLIMTRAIN_THROW(ConfigError, "checkpoint tensor '", entry.name, "' is on ", made.device(),
                        ": pass host copies (ckpt::host_copy)");
      const torch::Tensor t = made.contiguous();
      const std::uint64_t nbytes = static_cast<std::uint64_t>(t.numel()) * t.element_size();
      out.write(t.data_ptr(), nbytes);
      tensors.push_back({{"name", entry.name},
                         {"dtype", dtype_name(t.scalar_type())},
                         {"shape", t.sizes().vec()},
                         {"offset", offset},
                         {"nbytes", nbytes}});
      offset += nbytes;
      if (tensors.size() == 1) crash_point("mid-tensors");
    }
    out.commit();
    files.push_back(file_record(out, kTensorsFile));
  }
  crash_point("after-tensors");

  for (const auto& [blob_name, bytes] : state.blobs) {
    if (!valid_blob_name(blob_name))
      SLIMTRAIN_THROW(ConfigError, "checkpoint blob name '", blob_name,
                      "' must be 1-100 characters of [A-Za-z0-9_.-]");
    const std::string file_name = blob_file_name(blob_name);
    files::DurableFile out(tmp + "/" + file_name);
    out.write(bytes);
    out.commit();
    files.push_back(file_record(out, file_name));
    blobs.push_back({{"name", blob_name}, {"file", file_name}});
  }
  if (early.empty())
    collected = collect_rank_files(checkpoints, state.step, state.rank_files, tmp,
                                   state.rank_files_timeout_s);
  for (nlohmann::json& record : collected) {
    const std::string file = record["name"].get<std::string>();
    if (std::find(state.source_files.begin(), state.source_files.end(), file) ==
        state.source_files.end()) {
      files.push_back(std::move(record));
    } else {
      fs::remove(tmp + "/" + file);  // in tensors.bin now
    }
  }
  crash_point("after-blobs");

  {
    json doc = {{"step", state.step},
                {"epoch", state.epoch},
                {"epoch_step", state.epoch_step},
                {"meta", state.meta},
                {"retention_metric", metric ? json(*metric) : json(nullptr)}};
    files::DurableFile out(tmp + "/" + kStateFile);
    out.write(doc.dump(2) + "\n");
    out.commit();
    files.push_back(file_record(out, kStateFile));
  }
  crash_point("after-state");

  json manifest = {
      {"format", kFormatName}, {"version", kFormatVersion},
      {"step", state.step},    {"created_unix", static_cast<std::int64_t>(std::time(nullptr))},
      {"files", files},        {"tensors", tensors},
      {"blobs", blobs}};
  manifest["manifest_xxh3"] = manifest_self_checksum(manifest);
  {
    files::DurableFile out(tmp + "/" + kManifestFile);
    out.write(manifest.dump(1) + "\n");
    out.commit();
  }
  files::fsync_directory(tmp);
  crash_point("after-manifest");

  if (fs::exists(final_dir, ec)) {
    // The step of an earlier run in this directory (a run started afresh with --resume none), or
    // a final checkpoint tried again after its directory landed but `latest` did not. Moved aside
    // with plain renames, which every file system honours (not RENAME_EXCHANGE, which NFS and
    // Lustre may refuse); a crash in between leaves no step-N, and the checkpoints before it
    // loadable.
    const std::string old =
        checkpoints + "/" + kTmpPrefix + "replaced-" + name + "-" + std::to_string(::getpid());
    files::rename_checked(final_dir, old);
    files::rename_checked(tmp, final_dir);
    guard.release();
    files::remove_tree(old);
  } else {
    files::rename_checked(tmp, final_dir);
    guard.release();
  }
  files::fsync_directory(checkpoints);
  crash_point("after-rename");
  write_latest(checkpoints, name);
  if (!state.rank_files.empty() || !state.source_files.empty()) remove_staging(checkpoints, -1);
  return final_dir;
}

std::optional<std::string> read_latest_pointer(const std::string& checkpoints) {
  const std::string path = checkpoints + "/" + kLatestFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::string text = files::read_whole_file(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (!parse_step_dir_name(text)) {
    log::warn("checkpoint: ", path, " does not name a step directory: '", text, "'");
    return std::nullopt;
  }
  return checkpoints + "/" + text;
}

CheckpointState read_checkpoint(const std::string& dir, VerifyDepth depth,
                                const DeferTensor& defer) {
  const VerifyDetail detail = verify_checkpoint(dir, depth);
  if (!detail.report.ok)
    SLIMTRAIN_THROW(DataError, "checkpoint does not verify: ", detail.report.problem);
  CheckpointState state;
  try {
    state.step = detail.state.at("step").get<std::int64_t>();
    state.epoch = detail.state.at("epoch").get<std::int64_t>();
    state.epoch_step = detail.state.at("epoch_step").get<std::int64_t>();
    state.meta = detail.state.value("meta", json::object());
  } catch (const json::exception& e) {
    SLIMTRAIN_THROW(DataError, dir, "/", kStateFile, ": ", e.what());
  }

  const std::string tensors_path = dir + "/" + kTensorsFile;
  state.tensors_file = tensors_path;
  files::FileDescriptor fd = files::open_for_reading(tensors_path);
  for (const json& t : detail.manifest["tensors"]) {
    const std::string name = t["name"].get<std::string>();
    const auto shape = t["shape"].get<std::vector<std::int64_t>>();
    const auto type =
        scalar_type_from_name(t["dtype"].get<std::string>(), tensors_path + " '" + name + "'");
    const auto offset = t["offset"].get<std::uint64_t>();
    if (defer && defer(name)) {
      torch::Tensor shell = torch::empty({0}, torch::TensorOptions().dtype(type));
      shell.unsafeGetTensorImpl()->set_sizes_contiguous(shape);
      state.tensors.emplace_back(name, shell);
      state.tensors.back().deferred = true;
      state.tensors.back().offset = offset;
      continue;
    }
    torch::Tensor tensor = torch::empty(shape, torch::TensorOptions().dtype(type));
    files::read_exact_at(fd.get(), tensors_path, tensor.data_ptr(), t["nbytes"].get<std::size_t>(),
                         offset);
    state.tensors.emplace_back(name, tensor);
    state.tensors.back().offset = offset;
  }
  for (const json& b : detail.manifest["blobs"])
    state.blobs[b["name"].get<std::string>()] =
        files::read_whole_file(dir + "/" + b["file"].get<std::string>());
  return state;
}

torch::Tensor read_elements(const CheckpointState& state, const TensorEntry& entry,
                            std::int64_t from, std::int64_t count) {
  const torch::Tensor& t = entry.tensor;
  if (!entry.deferred || from < 0 || count < 0 || from + count > t.numel())
    SLIMTRAIN_THROW(Error, state.tensors_file, " '", entry.name, "': elements ", from, "..",
                    from + count, " of ", t.numel(), entry.deferred ? "" : " (not deferred)");
  torch::Tensor out = torch::empty({count}, t.options());
  if (count == 0) return out;
  const auto size = static_cast<std::uint64_t>(t.element_size());
  files::FileDescriptor fd = files::open_for_reading(state.tensors_file);
  files::read_exact_at(fd.get(), state.tensors_file, out.data_ptr(),
                       static_cast<std::size_t>(count) * size,
                       entry.offset + static_cast<std::uint64_t>(from) * size);
  return out;
}

}  // namespace slimtrain::ckpt
