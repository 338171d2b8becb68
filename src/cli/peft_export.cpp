#include "slimtrain/cli/peft_export.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/lora.hpp"

namespace slimtrain::cli {
namespace {

const char* const kPeftPrefix = "base_model.model.";

// "a.b.lora_A.weight" -> "a.b": the layer an adapter tensor belongs to.
std::string adapter_layer(const std::string& name) {
  const std::size_t at = name.find(".lora_");
  return name.substr(0, at);
}

}  // namespace

std::string peft_adapter_config(const eval::CheckpointModel& loaded) {
  const model::ModelSpec& spec = loaded.model->spec();
  const model::LoraOptions lora = model::LoraOptions::parse(spec.lora);
  std::set<std::string> targets;
  for (const auto& p : loaded.model->named_parameters(true))
    if (model::is_adapter_name(p.key())) targets.insert(adapter_layer(p.key()));
  // The head's modules (DistilBERT's pre_classifier too) and --lora-train's, trained in full.
  std::vector<std::string> to_save;
  const auto* hf = dynamic_cast<const model::hf::HfModel*>(loaded.model.get());
  for (const std::string& name : hf ? hf->head_names() : std::vector<std::string>{}) {
    const std::string module = name.substr(0, name.find('.'));
    if (std::find(to_save.begin(), to_save.end(), module) == to_save.end())
      to_save.push_back(module);
  }
  for (const std::string& m : spec.lora_train) to_save.push_back(m);
  const nlohmann::json config = {
      {"peft_type", "LORA"},
      {"task_type", "SEQ_CLS"},
      {"r", lora.r},
      {"lora_alpha", lora.alpha},
      {"lora_dropout", lora.dropout},
      {"target_modules", std::vector<std::string>(targets.begin(), targets.end())},
      {"modules_to_save", to_save},
      {"base_model_name_or_path", std::filesystem::absolute(spec.hf_dir).string()},
      {"bias", "none"},
      {"fan_in_fan_out", false},
      {"inference_mode", true},
      {"init_lora_weights", true},
      {"use_rslora", false},
      {"use_dora", false},
      {"layers_to_transform", nullptr},
      {"layers_pattern", nullptr},
      {"rank_pattern", nlohmann::json::object()},
      {"alpha_pattern", nlohmann::json::object()},
      {"revision", nullptr}};
  return config.dump(2) + "\n";
}

std::vector<ckpt::TensorToWrite> peft_adapter_tensors(const eval::CheckpointModel& loaded) {
  std::vector<ckpt::TensorToWrite> tensors;
  for (const auto& p : loaded.model->named_parameters(true)) {
    if (!p.value().requires_grad()) continue;  // the frozen base stays with the base model
    tensors.push_back({kPeftPrefix + p.key(), torch::kFloat32, p.value().sizes().vec(),
                       [&loaded, name = p.key()] {
                         return eval::stored_weight(loaded, name).to(torch::kFloat32);
                       }});
  }
  return tensors;
}

std::vector<ckpt::TensorToWrite> merged_tensors(const eval::CheckpointModel& loaded) {
  const model::LoraOptions lora = model::LoraOptions::parse(loaded.model->spec().lora);
  std::set<std::string> adapted;
  for (const auto& p : loaded.model->named_parameters(true))
    if (model::is_adapter_name(p.key())) adapted.insert(adapter_layer(p.key()));
  std::vector<ckpt::TensorToWrite> tensors;
  for (const auto& p : loaded.model->named_parameters(true)) {
    const std::string& name = p.key();
    if (model::is_adapter_name(name)) continue;
    const std::string layer = name.size() > 7 ? name.substr(0, name.size() - 7) : "";
    const bool merge = name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0 &&
                       adapted.count(layer) != 0;
    tensors.push_back(
        {name, torch::kFloat32, p.value().sizes().vec(), [&loaded, name, layer, merge, lora] {
           torch::Tensor w = eval::stored_weight(loaded, name).to(torch::kFloat32);
           if (!merge) return w;
           const torch::Tensor a = eval::stored_weight(loaded, layer + ".lora_A.weight");
           const torch::Tensor b = eval::stored_weight(loaded, layer + ".lora_B.weight");
           return w + torch::matmul(b.to(torch::kFloat32), a.to(torch::kFloat32)) * lora.scale();
         }});
  }
  for (const auto& b : loaded.model->named_buffers(true))
    tensors.push_back({b.key(), b.value().scalar_type(), b.value().sizes().vec(),
                       [&loaded, name = b.key()] { return eval::stored_weight(loaded, name); }});
  return tensors;
}

}  // namespace slimtrain::cli
