#include "slimtrain/eval/checkpoint_model.hpp"

#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::eval {

CheckpointModel load_checkpoint_model(const std::string& checkpoint,
                                      const data::DatasetInfo& info) {
  CheckpointModel out;
  out.checkpoint = ckpt::CheckpointManager::resolve(checkpoint, "--checkpoint");
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
