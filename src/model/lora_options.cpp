#include "slimtrain/model/lora_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, ',')) parts.push_back(part);
  return parts;
}

double number(const std::string& option, const std::string& key, const std::string& value) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(v))
    SLIMTRAIN_THROW(ConfigError, option, ": ", key, "='", value, "' is not a number");
  return v;
}

std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

LoraOptions LoraOptions::parse(const std::string& text, const std::string& option) {
  LoraOptions o;
  bool alpha_given = false;
  std::string key;
  for (const std::string& part : split_commas(text)) {
    const std::size_t eq = part.find('=');
    if (eq == std::string::npos) {
      // targets=q_proj,k_proj: the names after targets= run on until the next key.
      if (key == "targets" && !part.empty()) {
        o.targets.push_back(part);
        continue;
      }
      SLIMTRAIN_THROW(ConfigError, option, ": '", part,
                      "' is not KEY=VALUE (keys r, alpha, dropout, targets; e.g. "
                      "r=16,alpha=32,dropout=0.05,targets=q_proj,v_proj)");
    }
    key = part.substr(0, eq);
    const std::string value = part.substr(eq + 1);
    if (key == "r") {
      const double r = number(option, key, value);
      if (r < 1 || r != std::floor(r) || r > 1e6)
        SLIMTRAIN_THROW(ConfigError, option, ": r=", value, " is not a positive whole rank");
      o.r = static_cast<std::int64_t>(r);
    } else if (key == "alpha") {
      o.alpha = number(option, key, value);
      if (!(o.alpha > 0))
        SLIMTRAIN_THROW(ConfigError, option, ": alpha=", value, " is not positive");
      alpha_given = true;
    } else if (key == "dropout") {
      o.dropout = number(option, key, value);
      if (!(o.dropout >= 0 && o.dropout < 1))
        SLIMTRAIN_THROW(ConfigError, option, ": dropout=", value, " is outside [0, 1)");
    } else if (key == "targets") {
      if (value.empty()) SLIMTRAIN_THROW(ConfigError, option, ": targets= names no module");
      o.targets = {value};
    } else {
      SLIMTRAIN_THROW(ConfigError, option, ": unknown key '", key,
                      "' (keys r, alpha, dropout, targets)");
    }
  }
  if (!alpha_given) o.alpha = 2.0 * static_cast<double>(o.r);  // the usual alpha = 2r
  if (o.targets.size() > 1 &&
      std::find(o.targets.begin(), o.targets.end(), "all-linear") != o.targets.end())
    SLIMTRAIN_THROW(ConfigError, option,
                    ": targets=all-linear stands alone (it names every "
                    "linear layer of the body)");
  return o;
}

std::string LoraOptions::canonical() const {
  std::string text = "r=" + std::to_string(r) + ",alpha=" + short_number(alpha) +
                     ",dropout=" + short_number(dropout) + ",targets=";
  for (std::size_t i = 0; i < targets.size(); ++i) text += (i ? "," : "") + targets[i];
  return text;
}

}  // namespace slimtrain::model
