#include "slimtrain/model/hf/config_reader.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::model::hf {
namespace {

const char* const kActivations[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu",
                                    "silu", "swish",    "quick_gelu"};

}  // namespace

std::string activation_names() {
  std::string names;
  for (const char* a : kActivations) names += (names.empty() ? "" : ", ") + std::string(a);
  return names;
}

ConfigReader::ConfigReader(const nlohmann::json& j, std::string where)
    : j_(j), where_(std::move(where)) {
  if (!j_.is_object()) SLIMTRAIN_THROW(ConfigError, where_, ": is not a JSON object");
}

std::int64_t ConfigReader::size(const char* key) const {
  if (!j_.contains(key)) SLIMTRAIN_THROW(ConfigError, where_, ": has no \"", key, "\"");
  const nlohmann::json& v = j_[key];
  // 2^24: past every size a model has, short of sizes whose tensors could not be allocated.
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 ||
      v.get<std::int64_t>() > (std::int64_t{1} << 24))
    SLIMTRAIN_THROW(ConfigError, where_, ": \"", key, "\" is ", v.dump(),
                    ", not a positive integer up to 2^24");
  return v.get<std::int64_t>();
}

std::int64_t ConfigReader::size_or(const char* key, std::int64_t fallback) const {
  return has(key) ? size(key) : fallback;
}

std::int64_t ConfigReader::integer_or(const char* key, std::int64_t fallback) const {
  return j_.contains(key) && j_[key].is_number_integer() ? j_[key].get<std::int64_t>() : fallback;
}

double ConfigReader::number_or(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_number())
    SLIMTRAIN_THROW(ConfigError, where_, ": \"", key, "\" is ", j_[key].dump(), ", not a number");
  return j_[key].get<double>();
}

double ConfigReader::probability_or(const char* key, double fallback) const {
  const double p = number_or(key, fallback);
  if (!(p >= 0.0 && p < 1.0))
    SLIMTRAIN_THROW(ConfigError, where_, ": \"", key, "\" is ", p,
                    ", a dropout probability outside [0, 1)");
  return p;
}

bool ConfigReader::flag_or(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_boolean())
    SLIMTRAIN_THROW(ConfigError, where_, ": \"", key, "\" is ", j_[key].dump(),
                    ", not true or false");
  return j_[key].get<bool>();
}

std::string ConfigReader::text_or(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_string())
    SLIMTRAIN_THROW(ConfigError, where_, ": \"", key, "\" is ", j_[key].dump(), ", not a string");
  return j_[key].get<std::string>();
}

std::string ConfigReader::activation_or(const char* key, const std::string& fallback) const {
  const std::string act = text_or(key, fallback);
  for (const char* known : kActivations)
    if (act == known) return act;
  SLIMTRAIN_THROW(ConfigError, where_, ": ", key, " \"", act, "\" is not implemented (",
                  activation_names(), ")");
}

void ConfigReader::refuse(bool refused, const char* key, const std::string& why) const {
  if (!refused) return;
  SLIMTRAIN_THROW(ConfigError, where_, ": ", key, " ", j_.contains(key) ? j_[key].dump() : "",
                  " is not implemented (", why, ")");
}

ConfigReader ConfigReader::child(const char* key) const {
  const nlohmann::json& v = j_.contains(key) ? j_[key] : nlohmann::json::object();
  return ConfigReader(v.is_object() ? v : nlohmann::json::object(), where_ + " (" + key + ")");
}

std::int64_t ConfigReader::num_labels() const {
  if (j_.contains("id2label") && j_["id2label"].is_object() && !j_["id2label"].empty())
    return static_cast<std::int64_t>(j_["id2label"].size());
  return integer_or("num_labels", 2);
}

}  // namespace slimtrain::model::hf
