#include "slimtrain/model/hf/config.hpp"

#include <fstream>
#include <sstream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/hf/config_reader.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {

ConfigCounts& config_counts() {
  static ConfigCounts counts;
  return counts;
}

const HfArchitecture& HfConfig::architecture() const {
  return hf::architecture(model_type, "config.json");
}

std::string HfConfig::describe() const {
  std::ostringstream out;
  out << model_type << " hidden " << hidden_size << " layers " << num_hidden_layers << " heads "
      << num_attention_heads << describe_more();
  return out.str();
}

void read_base(const ConfigReader& r, HfConfig& c) {
  c.model_type = r.text_or("model_type", "");
  c.hidden_size = r.size("hidden_size");
  c.num_hidden_layers = r.size("num_hidden_layers");
  c.num_attention_heads = r.size("num_attention_heads");
  if (c.hidden_size % c.num_attention_heads != 0 && !r.has("head_dim"))
    SLIMTRAIN_THROW(ConfigError, r.where(), ": hidden_size ", c.hidden_size,
                    " is not a multiple of num_attention_heads ", c.num_attention_heads);
  c.initializer_range = r.number_or("initializer_range", 0.02);
  c.num_labels = r.num_labels();
}

std::shared_ptr<const HfConfig> parse_config(const nlohmann::json& j, const std::string& where) {
  ++config_counts().parses;
  try {
    const ConfigReader r(j, where);
    if (!j.contains("model_type") || !j["model_type"].is_string())
      SLIMTRAIN_THROW(ConfigError, where, ": has no \"model_type\" string");
    const HfArchitecture& arch = architecture(j["model_type"].get<std::string>(), where);
    if (j.contains("architectures") && j["architectures"].is_array())
      for (const auto& a : j["architectures"]) {
        const std::string name = a.is_string() ? a.get<std::string>() : a.dump();
        bool known = false;
        // Any head of the same body loads: the body's weights are what is reused.
        for (const std::string& prefix : arch.reads_architectures)
          known = known || name.rfind(prefix, 0) == 0;
        if (!known)
          SLIMTRAIN_THROW(ConfigError, where, ": architecture ", name,
                          " has no native module in slimtrain for model_type ", arch.model_type,
                          " (it reads ", arch.export_name, " and the other heads of its body)");
      }
    return arch.parse(r);
  } catch (const nlohmann::json::exception& e) {  // a field of another type than it should be
    SLIMTRAIN_THROW(ConfigError, where, ": ", e.what());
  }
}

std::shared_ptr<const HfConfig> parse_config_text(const std::string& text,
                                                  const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, where, ": its config is not JSON: ", e.what());
  }
  return parse_config(j, where);
}

std::int64_t token_limit(const nlohmann::json& j) {
  try {
    if (const std::int64_t n = parse_config(j, "config.json")->max_tokens(); n > 0) return n;
  } catch (const ConfigError&) {  // a model slimtrain does not build: its raw table
  }
  const auto it = j.find("max_position_embeddings");
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

ReadConfig read_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  std::ifstream in(path);
  if (!in)
    SLIMTRAIN_THROW(DataError, "--model hf:", dir, ": ", path,
                    " cannot be read (a directory save_pretrained wrote holds config.json and "
                    "model.safetensors)");
  ++config_counts().files;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(DataError, path, ": is not JSON: ", e.what());
  }
  ReadConfig out;
  out.config = parse_config(j, path);
  out.text = j.dump();
  return out;
}

}  // namespace slimtrain::model::hf
