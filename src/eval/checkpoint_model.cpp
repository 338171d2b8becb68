#include "slimtrain/eval/checkpoint_model.hpp"

#include <filesystem>
#include <fstream>

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
  std::ifstream in(p);
  std::string name;
  std::getline(in, name);
  if (!ckpt::parse_step_dir_name(name))
    SLIMTRAIN_THROW(DataError, "--checkpoint ", path, ": does not name a step-NNNNNNNN checkpoint");
  return (p.parent_path() / name).string();
}

}  // namespace

CheckpointModel load_checkpoint_model(const std::string& checkpoint,
                                      const data::DatasetInfo& info) {
  CheckpointModel out;
  out.checkpoint = ckpt::CheckpointManager::resolve(follow_latest(checkpoint), "--checkpoint");
  const ckpt::CheckpointState state = ckpt::CheckpointManager::load(out.checkpoint);
  if (!state.meta.contains("model"))
    SLIMTRAIN_THROW(DataError, out.checkpoint, ": state.json has no model description");
  const model::ModelSpec spec = model::ModelSpec::from_json(state.meta["model"]);
  if (spec.input_shape != info.input_shape() || spec.num_classes != info.num_classes)
    SLIMTRAIN_THROW(ConfigError, "--checkpoint ", out.checkpoint, " was trained for ",
                    spec.to_json().dump(), " but ", info.path, " holds ", info.num_classes,
                    " classes of another input shape");
  out.model = model::make_model(spec);
  ckpt::load_into(*out.model, state);
  out.step = state.step;
  return out;
}

}  // namespace slimtrain::eval
