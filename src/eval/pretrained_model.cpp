#include "slimtrain/eval/pretrained_model.hpp"

#include <algorithm>
#include <set>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/named_inputs.hpp"
#include "slimtrain/model/hf_classifier.hpp"
#include "slimtrain/model/hf_config.hpp"

namespace slimtrain::eval {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Tensors of other heads and non-learned buffers: transformers ignores them when loading too.
bool ignorable(const std::string& name) {
  return starts_with(name, "cls.") || starts_with(name, "lm_head.") ||
         ends_with(name, ".position_ids") || ends_with(name, ".token_type_ids");
}

std::string shape_text(c10::IntArrayRef sizes) {
  return model::format_shape(sizes);
}

}  // namespace

void check_hf_inputs(const model::ModelSpec& spec, const data::DatasetInfo& info) {
  const bool vit = model::hf_config_of(spec).is_vit();
  if (vit && info.named())
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(),
                    ": a ViT reads images, a "
                    "layout-1 file's x (prep images); ",
                    info.path, " has named inputs (", data::describe_inputs(info.inputs), ")");
  if (!vit && !info.named())
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(),
                    ": reads input_ids of a layout-2 file from prep text; ", info.path,
                    " has one input x (layout 1)");
}

PretrainedLoad load_pretrained_weights(model::ClassifierImpl& net, const std::string& dir) {
  auto* hf = dynamic_cast<model::HfClassifierImpl*>(&net);
  if (hf == nullptr)
    SLIMTRAIN_THROW(Error, "load_pretrained_weights: ", net.spec().model_option(),
                    " is not a HuggingFace model");
  ckpt::SafetensorsSet set(dir);
  const std::string where = set.files().size() == 1
                                ? set.files().front()
                                : dir + " (" + std::to_string(set.files().size()) + " files)";
  const std::string prefix = hf->config().base_prefix();
  const std::vector<std::string> heads = hf->head_names();
  const std::string optional = hf->optional_prefix();
  const auto is_head = [&](const std::string& n) {
    return std::find(heads.begin(), heads.end(), n) != heads.end() ||
           (!optional.empty() && starts_with(n, optional));
  };
  PretrainedLoad out;
  std::set<std::string> used;
  torch::NoGradGuard no_grad;
  for (auto& item : net.named_parameters(true)) {
    const std::string& name = item.key();
    torch::Tensor& param = item.value();
    std::string stored = name;
    if (!set.has(stored) && starts_with(name, prefix) && set.has(name.substr(prefix.size())))
      stored = name.substr(prefix.size());  // a base model's checkpoint: no "bert." prefix
    if (!set.has(stored)) {
      if (!is_head(name))
        SLIMTRAIN_THROW(DataError, where, ": has no tensor ", name, " (", shape_text(param.sizes()),
                        "), which ", net.spec().model_option(), " needs");
      out.created.push_back(name);
      if (out.created_reason.empty()) out.created_reason = "missing";
      continue;
    }
    used.insert(stored);
    const ckpt::SafetensorsEntry& entry = set.entry(stored);
    if (entry.shape != param.sizes().vec()) {
      if (!is_head(name))
        SLIMTRAIN_THROW(DataError, where, ": tensor ", stored, " is ", shape_text(entry.shape),
                        ", where ", net.spec().model_option(), " needs ",
                        shape_text(param.sizes()));
      out.created.push_back(name);
      if (out.created_reason.empty() || out.created_reason == "missing")
        out.created_reason = shape_text(entry.shape) + " where the data has " +
                             std::to_string(net.spec().num_classes) + " classes";
      continue;
    }
    param.copy_(set.read(stored).to(param.scalar_type()));
    ++out.loaded;
  }
  for (const std::string& name : set.names()) {
    if (used.count(name) > 0) continue;
    if (ignorable(name)) {
      out.ignored.push_back(name);
      continue;
    }
    SLIMTRAIN_THROW(DataError, where, ": holds tensor ", name, " (",
                    shape_text(set.entry(name).shape), "), which no part of ",
                    net.spec().model_option(), " (", hf->config().describe(), ") has");
  }
  return out;
}

std::string describe_created(const PretrainedLoad& load, const std::string& dir) {
  if (load.created.empty()) return "";
  std::string names;
  for (const std::string& n : load.created) names += (names.empty() ? "" : ", ") + n;
  return "hf:" + dir + ": " + names +
         " newly initialised (in the checkpoint: " + load.created_reason +
         "); train the model before its predictions mean anything";
}

model::ModelSpec pretrained_spec(const std::string& model_option, const data::DatasetInfo& info) {
  model::ModelSpec spec;
  spec.set_model(model_option);
  if (spec.name != "hf")
    SLIMTRAIN_THROW(ConfigError, "--model ", model_option, ": not an hf:DIR model");
  spec.hf_config = model::load_hf_config(spec.hf_dir);
  spec.input_shape = info.input_shape();
  spec.num_classes = info.num_classes;
  check_hf_inputs(spec, info);
  for (const data::InputInfo& in : info.inputs)
    if (in.name == "input_ids") spec.vocab_size = in.vocab_size;
  return spec;
}

CheckpointModel load_pretrained_model(const std::string& model_option,
                                      const data::DatasetInfo& info, bool log_rank0) {
  CheckpointModel out;
  const model::ModelSpec spec = pretrained_spec(model_option, info);
  out.model = model::make_model(spec);
  const PretrainedLoad load = load_pretrained_weights(*out.model, spec.hf_dir);
  if (log_rank0) {
    const std::string left_out = load.ignored.empty() ? ""
                                                      : ", " + std::to_string(load.ignored.size()) +
                                                            " of other heads and buffers left out";
    log::info("hf:", spec.hf_dir, ": ", load.loaded, " tensors loaded", left_out);
    if (!load.created.empty()) log::warn(describe_created(load, spec.hf_dir));
  }
  out.checkpoint = spec.hf_dir;
  out.step = 0;
  out.class_names = info.class_names;
  return out;
}

}  // namespace slimtrain::eval
