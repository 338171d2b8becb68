#include "slimtrain/cli/prep_vl.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/image_decode.hpp"
#include "slimtrain/tokenize/chat_template.hpp"

namespace slimtrain::cli {
namespace {

namespace fs = std::filesystem;

const char* const kImagePad = "<|image_pad|>";
const char* const kVisionStart = "<|vision_start|>";
const char* const kVisionEnd = "<|vision_end|>";

nlohmann::json read_json(const fs::path& path, const std::string& option) {
  std::ifstream in(path);
  if (!in) return nlohmann::json();
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, option, ": ", path.string(), " is not JSON: ", e.what());
  }
}

std::int64_t size_of(const nlohmann::json& j, const char* key, std::int64_t fallback,
                     const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < 1)
    SLIMTRAIN_THROW(ConfigError, where, ": \"", key, "\" is ", j[key].dump(),
                    ", not a positive integer");
  return j[key].get<std::int64_t>();
}

// preprocessor_config.json as Qwen2VLImageProcessor reads it (min_pixels / max_pixels, or size's
// shortest_edge / longest_edge in newer files).
data::VlImageSettings read_settings(const nlohmann::json& j, const std::string& where) {
  data::VlImageSettings s;
  if (!j.is_object()) SLIMTRAIN_THROW(ConfigError, where, ": is not a JSON object");
  const std::string type = j.value("image_processor_type", std::string());
  if (!type.empty() && type.rfind("Qwen2VLImageProcessor", 0) != 0)
    SLIMTRAIN_THROW(ConfigError, where, ": image_processor_type ", type,
                    " is not Qwen2VLImageProcessor's (the processor --image-column follows)");
  const nlohmann::json size = j.value("size", nlohmann::json::object());
  s.min_pixels =
      size_of(j, "min_pixels", size_of(size, "shortest_edge", s.min_pixels, where), where);
  s.max_pixels =
      size_of(j, "max_pixels", size_of(size, "longest_edge", s.max_pixels, where), where);
  s.patch_size = size_of(j, "patch_size", s.patch_size, where);
  s.temporal_patch_size = size_of(j, "temporal_patch_size", s.temporal_patch_size, where);
  s.merge_size = size_of(j, "merge_size", s.merge_size, where);
  s.do_resize = j.value("do_resize", true);
  s.do_rescale = j.value("do_rescale", true);
  s.do_normalize = j.value("do_normalize", true);
  s.rescale_factor = j.value("rescale_factor", s.rescale_factor);
  for (const char* key : {"image_mean", "image_std"}) {
    if (!j.contains(key)) continue;
    const auto& v = j[key];
    if (!v.is_array() || v.size() != 3)
      SLIMTRAIN_THROW(ConfigError, where, ": \"", key, "\" is ", v.dump(), ", not 3 numbers");
    auto& into = std::string(key) == "image_mean" ? s.mean : s.std;
    for (std::size_t c = 0; c < 3; ++c) into[c] = v[c].get<double>();
  }
  if (j.contains("resample") && j["resample"] != 3)
    SLIMTRAIN_THROW(ConfigError, where, ": resample ", j["resample"].dump(),
                    " is not 3 (bicubic, the filter prep resizes with)");
  return s;
}

}  // namespace

VlSamples::VlSamples(const CommandLine& cl, const std::string& tokenizer_json) {
  const fs::path dir = fs::path(tokenizer_json).parent_path();
  const fs::path config = cl.has("preprocessor") ? fs::path(cl.get<std::string>("preprocessor"))
                                                 : dir / "preprocessor_config.json";
  const std::string option = cl.has("preprocessor") ? "--preprocessor" : "--image-column";
  const nlohmann::json j = read_json(config, option);
  if (j.is_null())
    SLIMTRAIN_THROW(ConfigError, option, ": ", config.string(),
                    " cannot be read (the checkpoint's image processor settings: copy its "
                    "preprocessor_config.json beside its tokenizer.json, or name it with "
                    "--preprocessor)");
  settings_ = read_settings(j, config.string());
  settings_from_ = config.string();
  if (cl.has("max-pixels")) settings_.max_pixels = cl.get<std::int64_t>("max-pixels");
  if (settings_.max_pixels < settings_.min_pixels)
    SLIMTRAIN_THROW(ConfigError, "--max-pixels: ", settings_.max_pixels, " is below min_pixels ",
                    settings_.min_pixels, " of ", settings_from_);
  if (!cl.get<bool>("no-chat-template")) {
    std::string file;
    const std::string source = tokenize::find_chat_template(tokenizer_json, &file);
    if (!source.empty())
      chat_ = std::make_shared<const tokenize::ChatTemplate>(
          tokenize::ChatTemplate::parse(source, file));
  }
}

VlSamples::~VlSamples() = default;

std::string VlSamples::describe() const {
  return detail::concat("images in ", settings_.patch_size, "-pixel patches merged ",
                        settings_.merge_size, "x", settings_.merge_size, ", ", settings_.min_pixels,
                        " to ", settings_.max_pixels, " pixels (", settings_from_, "); ",
                        chat_ ? "the text in the chat template's user turn"
                              : "the text after its images, no chat template");
}

std::string VlSamples::prepare(const data::TextRecord& record, const std::string& base_dir,
                               RaggedValues<float>& pixels, RaggedValues<std::int64_t>& grids,
                               const std::string& where) const {
  if (record.texts.size() != 1)
    SLIMTRAIN_THROW(ConfigError,
                    "--image-column: an image and text sample takes one "
                    "--text-column, not ",
                    record.texts.size());
  std::vector<std::int64_t> merged;  // each image's tokens: its merged patches
  std::int64_t values = 0, rows = 0;
  for (const std::string& name : record.images) {
    const fs::path path = fs::path(name).is_absolute() ? fs::path(name) : fs::path(base_dir) / name;
    const std::string at = where + ", image " + path.string();
    data::Image image;
    try {
      image = data::load_image(path.string(), 3);
    } catch (const DataError& e) {  // the record too, not only the file
      SLIMTRAIN_THROW(DataError, where, ", image ", e.what());
    }
    data::VlPatches p = data::vl_patches(image, settings_, at);
    pixels.values.insert(pixels.values.end(), p.values.begin(), p.values.end());
    grids.values.insert(grids.values.end(), p.grid.begin(), p.grid.end());
    values += static_cast<std::int64_t>(p.values.size());
    rows += 3;
    merged.push_back(p.grid[0] * p.grid[1] * p.grid[2] /
                     (settings_.merge_size * settings_.merge_size));
  }
  pixels.lengths.push_back(values);
  grids.lengths.push_back(rows);
  std::string text;
  if (chat_) {
    tokenize::ChatMessage user;
    user.role = "user";
    for (std::size_t i = 0; i < merged.size(); ++i) user.content.push_back({"image", ""});
    user.content.push_back({"text", record.texts.front()});
    text = chat_->render({user}, true);
  } else {
    for (std::size_t i = 0; i < merged.size(); ++i)
      text += std::string(kVisionStart) + kImagePad + kVisionEnd;
    text += record.texts.front();
  }
  // Each image's one placeholder becomes a token per merged patch, in order, as the processor.
  std::string out;
  std::size_t at = 0, image = 0;
  for (std::size_t found; (found = text.find(kImagePad, at)) != std::string::npos;) {
    if (image >= merged.size())
      SLIMTRAIN_THROW(DataError, where, ": the chat template gives more image placeholders than ",
                      "the record's ", merged.size(), " images");
    out.append(text, at, found - at);
    for (std::int64_t k = 0; k < merged[image]; ++k) out += kImagePad;
    ++image;
    at = found + std::string(kImagePad).size();
  }
  out.append(text, at, std::string::npos);
  if (image != merged.size())
    SLIMTRAIN_THROW(DataError, where, ": the chat template places ", image, " of the record's ",
                    merged.size(), " images");
  return out;
}

}  // namespace slimtrain::cli
