#pragma once
/**
 * @brief Resizing 8-bit images to the layout's fixed H x W.
 *
 * The filter is PIL's BILINEAR as Image.resize applies it: a triangle filter whose support
 * widens with the reduction factor (antialiased downscaling: every source pixel under an output
 * pixel counts), applied separably, horizontal pass first, with PIL's 22-bit fixed-point
 * weights and rounding. Written from that description; results agree with PIL to within 1 in
 * 255 (tests/e2e/prep_images checks it). BICUBIC alike, with PIL's cubic kernel (a = -0.5,
 * support 2, widened the same way): Qwen2-VL's image processor resizes with it.
 */
#include <string>

#include "slimtrain/data/image_decode.hpp"

namespace slimtrain::data {

/**
 * @brief fit: stretch to H x W (the aspect ratio changes); crop: scale to cover H x W, then
 * cut the centre; pad: scale to fit inside H x W, centred on black.
 */
enum class ResizeMode { fit, crop, pad };

/** @brief "fit", "crop" or "pad"; ConfigError naming --resize otherwise. */
ResizeMode parse_resize_mode(const std::string& name);

/** @brief PIL's BILINEAR or BICUBIC (both antialiased when reducing). */
enum class ResizeFilter { bilinear, bicubic };

/** @brief `in` stretched to `height` x `width` with `filter`; a copy when it already is. */
Image resize_to(const Image& in, int height, int width, ResizeFilter filter);

/** @brief `in` brought to `height` x `width` (same channels); a copy when it already is. */
Image resize_image(const Image& in, int height, int width, ResizeMode mode);

}  // namespace slimtrain::data
