#pragma once
/**
 * @brief The images of `prep text --image-column`, as Qwen2-VL's processor prepares a sample:
 * each image made into patches with the checkpoint's preprocessor_config.json (data/vl_patches.hpp:
 * pixel_values, 3 x T x P x P values a row, and image_grid_thw, 3 a row), and the text put in
 * the chat template's user turn after its images (the template's <|image_pad|> placeholder
 * expanded to one token per merged patch), or, with --no-chat-template, as
 * <|vision_start|><|image_pad|>...<|vision_end|> before the text. Text-only records work too.
 */
#include <cstdint>
#include <memory>
#include <string>

#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/prep_ragged.hpp"
#include "slimtrain/data/text_table.hpp"
#include "slimtrain/data/vl_patches.hpp"

namespace slimtrain::tokenize {
class ChatTemplate;
}

namespace slimtrain::cli {

class VlSamples {
 public:
  /** @brief From --image-column's companions: preprocessor_config.json and the chat template
   * beside `tokenizer_json` (or --preprocessor), --max-pixels, --no-chat-template. */
  VlSamples(const CommandLine& cl, const std::string& tokenizer_json);
  ~VlSamples();
  /**
   * @brief The text the tokenizer reads for `record` (its one text with its images' tokens); the
   * images (paths relative to `base_dir` unless absolute) appended to `pixels` and `grids`.
   * DataError naming `where` and the image for one that cannot be read or is too narrow.
   */
  std::string prepare(const data::TextRecord& record, const std::string& base_dir,
                      RaggedValues<float>& pixels, RaggedValues<std::int64_t>& grids,
                      const std::string& where) const;
  std::int64_t row_size() const { return settings_.patch_elements(); }
  /** @brief "images 14x14 patches merged 2x2, 3136..1003520 pixels, Qwen's chat template" */
  std::string describe() const;

 private:
  data::VlImageSettings settings_;
  std::string settings_from_;
  std::shared_ptr<const tokenize::ChatTemplate> chat_;  ///< null: --no-chat-template or none
};

}  // namespace slimtrain::cli
