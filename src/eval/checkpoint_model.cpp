#include "slimtrain/eval/checkpoint_model.hpp"

#include <filesystem>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::eval {
namespace {

// RUN/checkpoints/latest is a one-line pointer file: the checkpoint it names, as inspect reads it.
std::string follow_latest(const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.filename() != ckpt::kLatestFile || !std::filesystem::is_regular_file(p, ec)) return path;
  const auto latest = ckpt::read_latest_pointer(p.parent_path().string());
  if (!latest)
    SLIMTRAIN_THROW(DataError, "--checkpoint ", path, ": does not name a step-NNNNNNNN checkpoint");
  return *latest;
}

}  // namespace

std::string resolve_checkpoint(const std::string& checkpoint) {
  return ckpt::CheckpointManager::resolve(follow_latest(checkpoint), "--checkpoint");
}

namespace {

CheckpointModel load(const std::string& dir, const data::DatasetInfo* info, ckpt::VerifyDepth depth,
                     const std::string& model) {
  CheckpointModel out;
  out.checkpoint = dir;
  const ckpt::CheckpointState state = ckpt::CheckpointManager::load(out.checkpoint, depth);
  if (!state.meta.contains("model"))
    SLIMTRAIN_THROW(DataError, out.checkpoint, ": state.json has no model description");
  model::ModelSpec spec = model::ModelSpec::from_json(state.meta["model"]);
  if (!model.empty()) {
    model::ModelSpec given;
    given.set_model(model);
    if (spec.name != "torchscript" || given.name != "torchscript")
      SLIMTRAIN_THROW(ConfigError, "--model ", model, ": checkpoint ", out.checkpoint, " holds a ",
                      spec.model_option(),
                      " model; --model only says where the TorchScript file of a torchscript "
                      "checkpoint is now");
    spec.script_path = given.script_path;
  }
  if (info && (spec.input_shape != info->input_shape() || spec.num_classes != info->num_classes))
    SLIMTRAIN_THROW(ConfigError, "--checkpoint ", out.checkpoint, " was trained for ",
                    spec.describe(), " but ", info->path, " holds ", info->num_classes,
                    " classes of another input shape");
  out.model = model::make_model(spec);
  ckpt::load_into(*out.model, state);
  out.step = state.step;
  if (state.meta.contains("class_names") && state.meta["class_names"].is_array())
    for (const auto& n : state.meta["class_names"])
      if (n.is_string()) out.class_names.push_back(n.get<std::string>());
  return out;
}

}  // namespace

CheckpointModel load_checkpoint_model(const std::string& dir, const data::DatasetInfo& info,
                                      ckpt::VerifyDepth depth, const std::string& model) {
  return load(dir, &info, depth, model);
}

CheckpointModel load_checkpoint_model(const std::string& dir, const std::string& model) {
  return load(dir, nullptr, ckpt::VerifyDepth::checksums, model);
}

}  // namespace slimtrain::eval
