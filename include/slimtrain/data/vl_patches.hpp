#pragma once
/**
 * @brief An image as Qwen2-VL's image processor (Qwen2VLImageProcessor) makes it for the model:
 * resized to whole merge blocks of patches within min_pixels and max_pixels (smart_resize),
 * bicubic as PIL resizes, rescaled and normalised with the processor's mean and std in float32,
 * the frame repeated to temporal_patch_size, and cut into flattened patches
 * [grid_h * grid_w, C x T x P x P] in the processor's order (each merge block's patches together,
 * the blocks row by row). Free of LibTorch.
 */
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "slimtrain/data/image_decode.hpp"

namespace slimtrain::data {

/** @brief What preprocessor_config.json says, with Qwen2VLImageProcessor's defaults. */
struct VlImageSettings {
  std::int64_t patch_size = 14, temporal_patch_size = 2, merge_size = 2;
  std::int64_t min_pixels = 56 * 56, max_pixels = 28 * 28 * 1280;
  bool do_resize = true, do_rescale = true, do_normalize = true;
  double rescale_factor = 1.0 / 255.0;
  std::array<double, 3> mean{0.48145466, 0.4578275, 0.40821073};  ///< OpenAI CLIP's
  std::array<double, 3> std{0.26862954, 0.26130258, 0.27577711};
  /** @brief Values in one flattened patch: C x T x P x P. */
  std::int64_t patch_elements() const { return 3 * temporal_patch_size * patch_size * patch_size; }
};

/**
 * @brief transformers' smart_resize: the height and width, each a multiple of `factor`, nearest
 * the image's (Python's round: halves to even) with the pixels within [min_pixels, max_pixels];
 * DataError naming `where` for an aspect ratio above 200.
 */
std::pair<std::int64_t, std::int64_t> smart_resize(std::int64_t height, std::int64_t width,
                                                   std::int64_t factor, std::int64_t min_pixels,
                                                   std::int64_t max_pixels,
                                                   const std::string& where);

/** @brief One image's patches and its grid (frames, rows, columns of patches). */
struct VlPatches {
  std::vector<float> values;  ///< [grid_h * grid_w rows of patch_elements()]
  std::array<std::int64_t, 3> grid{1, 0, 0};
};

/** @brief `rgb` (3 channels) made into patches as the processor does; `where` names it. */
VlPatches vl_patches(const Image& rgb, const VlImageSettings& settings, const std::string& where);

}  // namespace slimtrain::data
