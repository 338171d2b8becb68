#include "slimtrain/eval/pretrained_model.hpp"

#include <algorithm>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/model_for_data.hpp"
#include "slimtrain/model/lora.hpp"

namespace slimtrain::eval {

model::hf::WeightSource hf_weight_source(const std::string& dir) {
  auto set = std::make_shared<ckpt::SafetensorsSet>(dir);
  model::hf::WeightSource source;
  source.where = set->files().size() == 1
                     ? set->files().front()
                     : dir + " (" + std::to_string(set->files().size()) + " files)";
  source.has = [set](const std::string& name) { return set->has(name); };
  source.shape = [set](const std::string& name) { return set->entry(name).shape; };
  source.read = [set](const std::string& name) { return set->read(name); };
  source.names = [set] { return set->names(); };
  source.read_elements = [set](const std::string& name, std::int64_t from, std::int64_t count) {
    return set->read_elements(name, from, count);
  };
  return source;
}

model::hf::PretrainedLoad load_hf_weights(model::ClassifierImpl& net, const std::string& dir) {
  return model::hf::load_pretrained(net, hf_weight_source(dir));
}

CheckpointCount hf_checkpoint_parameters(const std::string& dir, const model::ModelSpec* spec) {
  ckpt::SafetensorsSet set(dir);  // the headers only: no tensor is read
  CheckpointCount count;
  const bool lora = spec != nullptr && !spec->lora.empty();
  const model::LoraOptions options =
      lora ? model::LoraOptions::parse(spec->lora) : model::LoraOptions{};
  const auto trains = [&](std::int64_t n) {
    count.trainable += n;
    count.largest_trainable = std::max(count.largest_trainable, n);
  };
  for (const std::string& name : set.names()) {
    if (model::hf::ignorable(name)) continue;
    const std::int64_t n = set.entry(name).numel();
    count.values += n;
    count.largest = std::max(count.largest, n);
    if (!lora || model::lora_trains_in_full(name, spec->lora_train)) trains(n);
    if (!lora) continue;
    const std::int64_t adapter = model::lora_adapter_values(name, set.entry(name).shape, options);
    if (adapter == 0) continue;
    count.values += adapter;
    // A and B, each its own tensor (the larger r x in or out x r, for the bucket's size).
    trains(adapter);
    count.largest_trainable =
        std::max(count.largest_trainable,
                 options.r * std::max(set.entry(name).shape[0], set.entry(name).shape[1]));
  }
  if (lora) count.largest = count.largest_trainable;
  return count;
}

void log_hf_load(const model::hf::PretrainedLoad& load, const model::ModelSpec& spec,
                 bool into_shards) {
  std::string left_out;
  if (!load.ignored.empty()) {
    left_out = ", left out as transformers leaves them: ";
    for (std::size_t i = 0; i < load.ignored.size(); ++i)
      left_out += (i == 0 ? "" : ", ") + load.ignored[i];
  }
  log::info("hf:", spec.hf_dir, ": ", load.loaded, " tensors loaded (", spec.describe(), ")",
            into_shards ? ", each rank reading only its shard's elements (--shard parameters)" : "",
            left_out);
  if (!load.created.empty()) log::warn(model::hf::describe_created(load, spec.hf_dir));
}

CheckpointModel load_pretrained_model(const std::string& model_option,
                                      const data::DatasetInfo& info, bool log_rank0) {
  CheckpointModel out;
  model::ModelSpec options;
  const model::ModelSpec spec = model_for_data(options, model_option, info);
  if (spec.name != "hf")
    SLIMTRAIN_THROW(ConfigError, "--model ", model_option, ": not an hf:DIR model");
  out.model = model::make_model(spec);
  const model::hf::PretrainedLoad load = load_hf_weights(*out.model, spec.hf_dir);
  if (log_rank0) log_hf_load(load, out.model->spec());
  out.checkpoint = spec.hf_dir;
  out.step = 0;
  out.class_names = info.class_names;
  return out;
}

}  // namespace slimtrain::eval
