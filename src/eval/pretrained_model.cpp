#include "slimtrain/eval/pretrained_model.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
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

nlohmann::json lora_base_record(const std::string& dir) {
  ckpt::SafetensorsSet set(dir);
  std::string text;
  // Each tensor's header entry and its first and last values: a fine-tune saved the same way
  // has the same headers, not the same values.
  constexpr std::int64_t kSample = 64;
  for (const std::string& name : set.names()) {
    const ckpt::SafetensorsEntry& e = set.entry(name);
    text += name + ' ' + e.dtype + ' ' + std::to_string(e.begin) + ' ' + std::to_string(e.end);
    for (const std::int64_t d : e.shape) text += ' ' + std::to_string(d);
    const std::int64_t n = e.numel(), k = std::min(n, kSample);
    for (const std::int64_t from : {std::int64_t{0}, n - k}) {
      if (k == 0) break;
      const torch::Tensor values = set.read_elements(name, from, k).contiguous();
      text.append(static_cast<const char*>(values.data_ptr()),
                  static_cast<std::size_t>(values.numel() * values.element_size()));
    }
    text += '\n';
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH64(text.data(), text.size(), 0)));
  return {{"dir", std::filesystem::absolute(dir).lexically_normal().string()},
          {"digest_xxh64", hex}};
}

void check_lora_base(const nlohmann::json& record, const std::string& dir,
                     const std::string& checkpoint) {
  const std::string want = record.value("digest_xxh64", std::string());
  std::string have;
  try {
    have = lora_base_record(dir).value("digest_xxh64", std::string());
  } catch (const std::exception& e) {
    SLIMTRAIN_THROW(DataError, checkpoint, " holds LoRA adapters of the base model ", dir,
                    ", which cannot be read: ", e.what());
  }
  if (have != want)
    SLIMTRAIN_THROW(DataError, checkpoint, " holds LoRA adapters of the base model in ", dir,
                    ", but the safetensors there are not the ones it was trained on (digest ", have,
                    ", trained on ", want, ")");
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
                                      const data::DatasetInfo& info, bool log_rank0, bool bf16) {
  CheckpointModel out;
  model::ModelSpec options;
  const model::ModelSpec spec = model_for_data(options, model_option, info);
  if (spec.name != "hf")
    SLIMTRAIN_THROW(ConfigError, "--model ", model_option, ": not an hf:DIR model");
  out.model = model::make_model(spec);
  const model::hf::PretrainedLoad load = load_hf_weights(*out.model, spec.hf_dir);
  if (log_rank0) log_hf_load(load, out.model->spec());
  if (bf16) hold_in_bf16(*out.model);
  out.checkpoint = spec.hf_dir;
  out.step = 0;
  out.class_names = info.class_names;
  return out;
}

}  // namespace slimtrain::eval
