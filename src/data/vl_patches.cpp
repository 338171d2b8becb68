#include "slimtrain/data/vl_patches.hpp"

#include <cmath>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/image_resize.hpp"

namespace slimtrain::data {
namespace {

// Python's round(): to the nearest, halves to even (the default rounding mode's nearbyint).
std::int64_t python_round(double x) {
  return static_cast<std::int64_t>(std::nearbyint(x));
}

}  // namespace

std::pair<std::int64_t, std::int64_t> smart_resize(std::int64_t height, std::int64_t width,
                                                   std::int64_t factor, std::int64_t min_pixels,
                                                   std::int64_t max_pixels,
                                                   const std::string& where) {
  const double h = static_cast<double>(height), w = static_cast<double>(width);
  const double f = static_cast<double>(factor);
  if (std::max(h, w) / std::min(h, w) > 200)
    SLIMTRAIN_THROW(DataError, where, ": an aspect ratio of ", std::max(h, w) / std::min(h, w),
                    " (", width, "x", height, "), above the processor's 200");
  std::int64_t h_bar = python_round(h / f) * factor, w_bar = python_round(w / f) * factor;
  if (h_bar * w_bar > max_pixels) {
    const double beta = std::sqrt(h * w / static_cast<double>(max_pixels));
    h_bar = std::max(factor, static_cast<std::int64_t>(std::floor(h / beta / f)) * factor);
    w_bar = std::max(factor, static_cast<std::int64_t>(std::floor(w / beta / f)) * factor);
  } else if (h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / (h * w));
    h_bar = static_cast<std::int64_t>(std::ceil(h * beta / f)) * factor;
    w_bar = static_cast<std::int64_t>(std::ceil(w * beta / f)) * factor;
  }
  return {h_bar, w_bar};
}

VlPatches vl_patches(const Image& rgb, const VlImageSettings& s, const std::string& where) {
  if (rgb.channels != 3) SLIMTRAIN_THROW(DataError, where, ": not decoded as RGB");
  const std::int64_t factor = s.patch_size * s.merge_size;
  Image image = rgb;
  if (s.do_resize) {
    const auto [h, w] =
        smart_resize(rgb.height, rgb.width, factor, s.min_pixels, s.max_pixels, where);
    image = resize_to(rgb, static_cast<int>(h), static_cast<int>(w), ResizeFilter::bicubic);
  }
  if (image.height % factor != 0 || image.width % factor != 0)
    SLIMTRAIN_THROW(DataError, where, ": ", image.width, "x", image.height,
                    " is not whole blocks of ", factor, " pixels and do_resize is off");
  // Rescaled in float64 and stored as float32, then normalised in float32, as the processor.
  std::array<float, 3> mean{}, std{};
  for (int c = 0; c < 3; ++c) {
    mean[static_cast<std::size_t>(c)] = static_cast<float>(s.mean[static_cast<std::size_t>(c)]);
    std[static_cast<std::size_t>(c)] = static_cast<float>(s.std[static_cast<std::size_t>(c)]);
  }
  const auto value = [&](int y, int x, int c) {
    const std::uint8_t u = image.pixels[(static_cast<std::size_t>(y) * image.width + x) * 3 +
                                        static_cast<std::size_t>(c)];
    float v = s.do_rescale ? static_cast<float>(static_cast<double>(u) * s.rescale_factor)
                           : static_cast<float>(u);
    if (s.do_normalize)
      v = (v - mean[static_cast<std::size_t>(c)]) / std[static_cast<std::size_t>(c)];
    return v;
  };
  const std::int64_t p = s.patch_size, m = s.merge_size, t = s.temporal_patch_size;
  const std::int64_t gh = image.height / p, gw = image.width / p;
  VlPatches out;
  out.grid = {1, gh, gw};
  out.values.reserve(static_cast<std::size_t>(gh * gw * s.patch_elements()));
  // Patches (block row, block column, row in block, column in block); in each: C, T, P, P.
  for (std::int64_t br = 0; br < gh / m; ++br)
    for (std::int64_t bc = 0; bc < gw / m; ++bc)
      for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t c = 0; c < m; ++c) {
          const std::int64_t y0 = (br * m + r) * p, x0 = (bc * m + c) * p;
          for (int ch = 0; ch < 3; ++ch)
            for (std::int64_t frame = 0; frame < t; ++frame)
              for (std::int64_t y = 0; y < p; ++y)
                for (std::int64_t x = 0; x < p; ++x)
                  out.values.push_back(
                      value(static_cast<int>(y0 + y), static_cast<int>(x0 + x), ch));
        }
  return out;
}

}  // namespace slimtrain::data
