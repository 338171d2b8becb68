#include "slimtrain/model/model_spec.hpp"

#include <xxhash.h>

#include <cstdio>
#include <sstream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {

std::string shape_text(const std::vector<std::int64_t>& sizes) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i == 0 ? "" : ",") << sizes[i];
  out << ']';
  return out.str();
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

void ModelSpec::set_model(const std::string& value, const std::string& option) {
  ModelChoice choice = parse_model_option(value, option);
  name = std::move(choice.name);
  script_path = std::move(choice.script_path);
  hf_dir = std::move(choice.hf_dir);
}

std::string ModelSpec::model_option() const {
  if (name == "hf") return kHfModelPrefix + hf_dir;
  return name == "torchscript" ? kScriptPrefix + script_path : name;
}

std::string ModelSpec::describe() const {
  std::ostringstream out;
  out << model_option();
  // A model of named inputs (an hf checkpoint's input_ids, attention_mask) has no one shape.
  if (!input_shape.empty()) out << " input " << shape_text(input_shape);
  out << " classes " << num_classes;
  const ModelKind* k = find_model_kind(name);
  if (k != nullptr && k->describe != nullptr) k->describe(*this, out);
  if (label_smoothing > 0) out << " label-smoothing " << label_smoothing;
  if (!lora.empty()) out << " lora " << lora;
  return out.str();
}

// Every field under its own name; a key missing from an older file keeps the field's default
// (cnn_layers: 5 before it existed).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ModelSpec, name, input_shape, num_classes,
                                                mlp_widths, vit_patch, vit_dim, vit_depth,
                                                vit_heads, cnn_width, cnn_layers, label_smoothing,
                                                vocab_size, text_dim, text_bigrams, text_depth,
                                                text_heads, script_path, script_signature,
                                                logits_output, model_loss, jit_optimize, hf_dir,
                                                hf_config, lora, lora_train)

nlohmann::json ModelSpec::to_json() const {
  return nlohmann::json(*this);
}

ModelSpec ModelSpec::from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object()) SLIMTRAIN_THROW(ConfigError, "model spec: expected a JSON object");
    return j.get<ModelSpec>();
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, "model spec: ", e.what());
  }
}

std::string ModelSpec::fingerprint() const {
  // Only what shapes the parameters; nlohmann::json sorts keys, so the dump is canonical.
  nlohmann::json arch = {{"format", "slimtrain-model-1"},
                         {"name", name},
                         {"input_shape", input_shape},
                         {"num_classes", num_classes}};
  const ModelKind* k = find_model_kind(name);
  if (k != nullptr && k->shape_fields != nullptr) k->shape_fields(*this, arch);
  // Adapters are parameters too (and which ones train is the checkpoint's business).
  if (!lora.empty()) arch["lora"] = {{"options", lora}, {"train", lora_train}};
  const std::string text = arch.dump();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH64(text.data(), text.size(), 0)));
  return hex;
}

}  // namespace slimtrain::model
