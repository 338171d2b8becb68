#include "slimtrain/cli/image_preprocessor.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "slimtrain/core/error.hpp"

namespace slimtrain::cli {
namespace {

std::vector<float> floats(const nlohmann::json& j, const char* key, const std::string& where) {
  std::vector<float> out;
  if (!j.contains(key) || !j[key].is_array())
    SLIMTRAIN_THROW(ConfigError, where, ": has no \"", key, "\" list");
  for (const auto& v : j[key]) {
    if (!v.is_number()) SLIMTRAIN_THROW(ConfigError, where, ": \"", key, "\" holds ", v.dump());
    out.push_back(v.get<float>());
  }
  return out;
}

ImagePreprocessor parse(const nlohmann::json& j, const std::string& where, int channels) {
  ImagePreprocessor p;
  if (!j.is_object()) SLIMTRAIN_THROW(ConfigError, where, ": is not a JSON object");
  if (j.value("do_center_crop", false))
    SLIMTRAIN_THROW(ConfigError, where,
                    ": do_center_crop is not implemented (prep images "
                    "--resize crop crops to --size instead)");
  if (j.value("do_resize", true) && j.contains("size")) {
    const nlohmann::json& size = j["size"];
    if (size.is_object() && size.contains("height") && size.contains("width")) {
      p.height = size["height"].get<int>();
      p.width = size["width"].get<int>();
    } else if (size.is_number_integer()) {
      p.height = p.width = size.get<int>();
    } else {
      SLIMTRAIN_THROW(ConfigError, where, ": size ", size.dump(),
                      " is not implemented (height and width); give --size HxW");
    }
    if (p.height < 1 || p.width < 1 || p.height > 65535 || p.width > 65535)
      SLIMTRAIN_THROW(ConfigError, where, ": size ", size.dump(), " is outside 1..65535");
  }
  if (j.contains("resample") && j["resample"].is_number_integer()) p.resample = j["resample"];
  const double rescale = j.value("do_rescale", true) ? j.value("rescale_factor", 1.0 / 255.0) : 1.0;
  if (!(rescale > 0.0)) SLIMTRAIN_THROW(ConfigError, where, ": rescale_factor ", rescale);
  if (j.value("do_normalize", true)) {
    p.mean = floats(j, "image_mean", where);
    p.std = floats(j, "image_std", where);
  } else {
    p.mean.assign(static_cast<std::size_t>(channels), 0.0f);
    p.std.assign(static_cast<std::size_t>(channels), 1.0f);
  }
  if (p.mean.size() != static_cast<std::size_t>(channels) || p.std.size() != p.mean.size())
    SLIMTRAIN_THROW(ConfigError, where, ": image_mean and image_std have ", p.mean.size(), " and ",
                    p.std.size(), " values for images of ", channels, " channels (--channels)");
  for (std::size_t c = 0; c < p.mean.size(); ++c) {
    if (!(p.std[c] > 0.0f)) SLIMTRAIN_THROW(ConfigError, where, ": image_std ", p.std[c]);
    p.mean[c] = static_cast<float>(p.mean[c] / rescale);
    p.std[c] = static_cast<float>(p.std[c] / rescale);
  }
  return p;
}

}  // namespace

ImagePreprocessor read_image_preprocessor(const std::string& path, int channels) {
  std::ifstream in(path);
  if (!in) SLIMTRAIN_THROW(ConfigError, "--preprocessor: ", path, " cannot be read");
  try {
    return parse(nlohmann::json::parse(in), "--preprocessor " + path, channels);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, "--preprocessor ", path, ": ", e.what());
  }
}

}  // namespace slimtrain::cli
