#pragma once
/**
 * @brief JPEG (libjpeg-turbo) and PNG (libpng) files decoded to 8-bit pixels, the way
 * torchvision's default loader sees them (PIL's convert("RGB") or convert("L")): grayscale,
 * RGB, RGBA (alpha dropped, not blended), palette and 16-bit (high byte) images; RGB to
 * grayscale by ITU-R 601-2 luma as PIL computes it. No EXIF rotation, no gamma (as PIL).
 */
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::data {

/** @brief Pixels row by row, channels interleaved (HWC). */
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<std::uint8_t> pixels;
};

/** @brief What a file's first bytes say it is: "JPEG", "PNG", another format's name, or "". */
std::string sniff_image_format(const std::uint8_t* bytes, std::size_t size);

/**
 * @brief Decodes `bytes` (the contents of `path`) to `channels` (1 or 3) channels. DataError
 * naming `path` for an unsupported format, a truncated or corrupt image, or a CMYK JPEG.
 */
Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& path, int channels);

/** @brief Reads `path` and decodes it; DataError naming it when it cannot be read. */
Image load_image(const std::string& path, int channels);

}  // namespace slimtrain::data
