#include "slimtrain/eval/checkpoint_model.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/eval/pretrained_model.hpp"
#include "slimtrain/model/bf16_weights.hpp"
#include "slimtrain/model/deferred_weights.hpp"
#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/lora.hpp"
#include "slimtrain/runtime/heap.hpp"

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

void hold_in_bf16(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> float32 = model::float32_only_parameters(model);
  for (torch::Tensor p : model.parameters()) {
    const bool kept = std::any_of(float32.begin(), float32.end(),
                                  [&](const torch::Tensor& t) { return t.is_same(p); });
    if (!kept && p.is_floating_point() && p.scalar_type() != torch::kBFloat16)
      p.set_data(p.to(torch::kBFloat16));
  }
}

std::string resolve_checkpoint(const std::string& checkpoint) {
  return ckpt::CheckpointManager::resolve(follow_latest(checkpoint), "--checkpoint");
}

namespace {

CheckpointModel load(const std::string& dir, const data::DatasetInfo* info, ckpt::VerifyDepth depth,
                     const std::string& model, bool weights_stay = false, bool bf16 = false) {
  CheckpointModel out;
  out.checkpoint = dir;
  ckpt::DeferTensor in_file;
  if (weights_stay) in_file = [](const std::string& name) { return name.rfind("model/", 0) == 0; };
  auto read = std::make_shared<ckpt::CheckpointState>(
      ckpt::CheckpointManager::load(out.checkpoint, depth, in_file));
  const ckpt::CheckpointState& state = *read;
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
  // In bf16 a --lora checkpoint's frozen base is never whole in float32: a decoder's layers made
  // empty and given bf16 memory before the base's load fills them (as the trainer does).
  const bool frozen_bf16 = bf16 && state.meta.contains("lora_base");
  {
    std::optional<model::DeferredWeights> deferred;
    if (weights_stay || frozen_bf16) deferred.emplace(torch::kCPU);
    out.model = model::make_model(spec);
  }
  if (frozen_bf16) {
    runtime::release_freed_memory();
    model::hold_frozen_in_bf16(*out.model);
  }
  // A --lora checkpoint holds what trained; the frozen base is read from the model it names.
  std::set<std::string> from_base;
  if (state.meta.contains("lora_base")) {
    // Where the run found it, absolute: eval and export may run from another directory.
    const std::string base = state.meta["lora_base"].value("dir", spec.hf_dir);
    check_lora_base(state.meta["lora_base"], base, out.checkpoint);
    from_base = ckpt::frozen_parameter_names(*out.model);
    out.base_dir = base;
    if (!weights_stay) load_hf_weights(*out.model, base);
  }
  ckpt::load_into(*out.model, state, "model/", from_base);  // weights that stay: checked only
  if (weights_stay) out.stored = read;
  if (bf16) hold_in_bf16(*out.model);
  out.step = state.step;
  if (state.meta.contains("class_names") && state.meta["class_names"].is_array())
    for (const auto& n : state.meta["class_names"])
      if (n.is_string()) out.class_names.push_back(n.get<std::string>());
  return out;
}

}  // namespace

CheckpointModel load_checkpoint_model(const std::string& dir, const data::DatasetInfo& info,
                                      ckpt::VerifyDepth depth, const std::string& model,
                                      bool bf16) {
  return load(dir, &info, depth, model, /*weights_stay=*/false, bf16);
}

CheckpointModel load_checkpoint_model(const std::string& dir, const std::string& model) {
  return load(dir, nullptr, ckpt::VerifyDepth::checksums, model);
}

CheckpointModel open_checkpoint_model(const std::string& dir, const std::string& model) {
  return load(dir, nullptr, ckpt::VerifyDepth::checksums, model, /*weights_stay=*/true);
}

torch::Tensor stored_weight(const CheckpointModel& opened, const std::string& name) {
  if (!opened.stored) SLIMTRAIN_THROW(Error, "stored_weight: not an open_checkpoint_model");
  for (const ckpt::TensorEntry& e : opened.stored->tensors)
    if (e.name == "model/" + name)
      return ckpt::read_elements(*opened.stored, e, 0, e.tensor.numel()).view(e.tensor.sizes());
  if (!opened.base_dir.empty()) {  // a --lora checkpoint's frozen base
    const model::hf::WeightSource base = hf_weight_source(opened.base_dir);
    const auto* hf = dynamic_cast<const model::hf::HfModel*>(opened.model.get());
    for (const std::string& stored : hf ? hf->stored_names(name) : std::vector<std::string>{name})
      if (base.has(stored)) return base.read(stored);
  }
  SLIMTRAIN_THROW(DataError, opened.checkpoint, ": has no tensor model/", name);
}

}  // namespace slimtrain::eval
