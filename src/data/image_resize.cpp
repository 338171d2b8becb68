#include "slimtrain/data/image_resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // as PIL: room for the sum of 8-bit products

double triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// PIL's BICUBIC: the cubic convolution kernel with a = -0.5, support 2.
double cubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// The weights of one axis: output pixel i reads `count[i]` source pixels from `first[i]`.
struct Taps {
  std::vector<int> first, count;
  std::vector<std::int32_t> weights;  // `width` per output pixel, fixed point
  int width = 0;
};

Taps make_taps(int in_size, double box_start, double box_end, int out_size, ResizeFilter filter) {
  const double scale = (box_end - box_start) / out_size;
  const double filter_scale = std::max(scale, 1.0);  // widen when reducing: antialiasing
  const bool bicubic = filter == ResizeFilter::bicubic;
  const double support = (bicubic ? 2.0 : 1.0) * filter_scale;
  Taps t;
  t.width = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<std::size_t>(out_size));
  t.count.resize(static_cast<std::size_t>(out_size));
  t.weights.assign(static_cast<std::size_t>(out_size) * t.width, 0);
  std::vector<double> w(static_cast<std::size_t>(t.width));
  for (int i = 0; i < out_size; ++i) {
    const double center = box_start + (i + 0.5) * scale;
    const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    const int n = std::min(static_cast<int>(center + support + 0.5), in_size) - lo;
    double total = 0.0;
    for (int k = 0; k < n; ++k) {
      const double at = (k + lo - center + 0.5) / filter_scale;
      w[static_cast<std::size_t>(k)] = bicubic ? cubic(at) : triangle(at);
      total += w[static_cast<std::size_t>(k)];
    }
    std::int32_t* out = &t.weights[static_cast<std::size_t>(i) * t.width];
    for (int k = 0; k < n; ++k) {
      const double v = total != 0.0 ? w[static_cast<std::size_t>(k)] / total : 0.0;
      out[k] = static_cast<std::int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits)
                                               : 0.5 + v * (1 << kPrecisionBits));
    }
    t.first[static_cast<std::size_t>(i)] = lo;
    t.count[static_cast<std::size_t>(i)] = std::max(n, 0);
  }
  return t;
}

std::uint8_t clip8(std::int64_t sum) {
  const std::int64_t v = sum >> kPrecisionBits;
  return static_cast<std::uint8_t>(std::clamp<std::int64_t>(v, 0, 255));
}

// Along x: every row of `in` (its full height) to `out_w` columns.
Image horizontal(const Image& in, const Taps& t, int out_w) {
  Image out{out_w, in.height, in.channels, {}};
  const int c = in.channels;
  out.pixels.resize(static_cast<std::size_t>(out_w) * in.height * c);
  for (int y = 0; y < in.height; ++y) {
    const std::uint8_t* row = &in.pixels[static_cast<std::size_t>(y) * in.width * c];
    std::uint8_t* dst = &out.pixels[static_cast<std::size_t>(y) * out_w * c];
    for (int x = 0; x < out_w; ++x) {
      const std::int32_t* w = &t.weights[static_cast<std::size_t>(x) * t.width];
      const int lo = t.first[static_cast<std::size_t>(x)], n = t.count[static_cast<std::size_t>(x)];
      for (int ch = 0; ch < c; ++ch) {
        std::int64_t sum = std::int64_t(1) << (kPrecisionBits - 1);
        for (int k = 0; k < n; ++k) sum += std::int64_t(row[(lo + k) * c + ch]) * w[k];
        dst[x * c + ch] = clip8(sum);
      }
    }
  }
  return out;
}

// Along y: every column of `in` to `out_h` rows.
Image vertical(const Image& in, const Taps& t, int out_h) {
  Image out{in.width, out_h, in.channels, {}};
  const std::size_t stride = static_cast<std::size_t>(in.width) * in.channels;
  out.pixels.resize(stride * out_h);
  for (int y = 0; y < out_h; ++y) {
    const std::int32_t* w = &t.weights[static_cast<std::size_t>(y) * t.width];
    const int lo = t.first[static_cast<std::size_t>(y)], n = t.count[static_cast<std::size_t>(y)];
    std::uint8_t* dst = &out.pixels[static_cast<std::size_t>(y) * stride];
    for (std::size_t i = 0; i < stride; ++i) {
      std::int64_t sum = std::int64_t(1) << (kPrecisionBits - 1);
      for (int k = 0; k < n; ++k)
        sum += std::int64_t(in.pixels[static_cast<std::size_t>(lo + k) * stride + i]) * w[k];
      dst[i] = clip8(sum);
    }
  }
  return out;
}

// The source box [x0, x1) x [y0, y1) (fractional) resampled to out_w x out_h.
Image resample(const Image& in, double x0, double y0, double x1, double y1, int out_w, int out_h,
               ResizeFilter filter = ResizeFilter::bilinear) {
  const bool full_x = x0 == 0 && x1 == in.width, full_y = y0 == 0 && y1 == in.height;
  const bool along_x = !(full_x && out_w == in.width), along_y = !(full_y && out_h == in.height);
  Image out = in;
  // Pillow (13) reduces the height before it enlarges the width, else passes along x first; each
  // pass rounds to 8 bits, so the order shows in the pixels.
  if (along_y && out_h < y1 - y0 && out_w > x1 - x0) {
    out = vertical(out, make_taps(in.height, y0, y1, out_h, filter), out_h);
    return horizontal(out, make_taps(in.width, x0, x1, out_w, filter), out_w);
  }
  if (along_x) out = horizontal(out, make_taps(in.width, x0, x1, out_w, filter), out_w);
  if (along_y) out = vertical(out, make_taps(in.height, y0, y1, out_h, filter), out_h);
  return out;
}

}  // namespace

ResizeMode parse_resize_mode(const std::string& name) {
  if (name == "fit") return ResizeMode::fit;
  if (name == "crop") return ResizeMode::crop;
  if (name == "pad") return ResizeMode::pad;
  SLIMTRAIN_THROW(ConfigError, "--resize: '", name, "' must be fit, crop or pad");
}

Image resize_to(const Image& in, int height, int width, ResizeFilter filter) {
  return resample(in, 0, 0, in.width, in.height, width, height, filter);
}

Image resize_image(const Image& in, int height, int width, ResizeMode mode) {
  const double w = in.width, h = in.height;
  if (mode == ResizeMode::fit) return resample(in, 0, 0, w, h, width, height);
  if (mode == ResizeMode::crop) {
    // The largest centred box with the output's aspect ratio.
    const double s = std::max(width / w, height / h);
    const double bw = width / s, bh = height / s;
    return resample(in, (w - bw) / 2, (h - bh) / 2, (w + bw) / 2, (h + bh) / 2, width, height);
  }
  const double s = std::min(width / w, height / h);
  const int iw = std::clamp(static_cast<int>(std::lround(w * s)), 1, width);
  const int ih = std::clamp(static_cast<int>(std::lround(h * s)), 1, height);
  const Image inner = resample(in, 0, 0, w, h, iw, ih);
  Image out{width, height, in.channels, {}};
  out.pixels.assign(static_cast<std::size_t>(width) * height * in.channels, 0);
  const int ox = (width - iw) / 2, oy = (height - ih) / 2;
  const std::size_t row = static_cast<std::size_t>(iw) * in.channels;
  for (int y = 0; y < ih; ++y)
    std::copy_n(&inner.pixels[static_cast<std::size_t>(y) * row], row,
                &out.pixels[(static_cast<std::size_t>(y + oy) * width + ox) * in.channels]);
  return out;
}

}  // namespace slimtrain::data
