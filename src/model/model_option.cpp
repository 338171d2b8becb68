#include "slimtrain/model/model_option.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/model_kind.hpp"

namespace slimtrain::model {

ModelChoice parse_model_option(const std::string& value, const std::string& option) {
  const std::string prefix = kScriptPrefix;
  if (value.compare(0, prefix.size(), prefix) == 0) {
    ModelChoice choice{"torchscript", value.substr(prefix.size()), ""};
    if (choice.script_path.empty())
      SLIMTRAIN_THROW(ConfigError, option, ": 'torchscript:' needs a path, e.g. torchscript:m.pt");
    return choice;
  }
  const std::string hf = kHfModelPrefix;
  if (value.compare(0, hf.size(), hf) == 0) {
    ModelChoice choice{"hf", "", value.substr(hf.size())};
    while (choice.hf_dir.size() > 1 && choice.hf_dir.back() == '/') choice.hf_dir.pop_back();
    if (choice.hf_dir.empty())
      SLIMTRAIN_THROW(ConfigError, option,
                      ": 'hf:' needs a directory save_pretrained wrote, e.g. hf:my-bert");
    return choice;
  }
  for (const std::string& known : model_names())
    if (value == known) return {value, "", ""};
  SLIMTRAIN_THROW(ConfigError, option, ": '", value,
                  "' is not one of mlp, cnn-small, cnn-bn, vit-tiny, text-bow, text-transformer, "
                  "torchscript:PATH.pt, hf:DIR");
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> built_in;
    for (const ModelKind& k : model_kinds())
      if (k.built_in) built_in.push_back(k.name);
    return built_in;
  }();
  return names;
}

}  // namespace slimtrain::model
