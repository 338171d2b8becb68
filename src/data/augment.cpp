#include "slimtrain/data/augment.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/shard.hpp"

namespace slimtrain::data {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Random erasing's ranges, torchvision's RandomErasing defaults: area fraction and aspect ratio.
constexpr double kEraseAreaMin = 0.02, kEraseAreaMax = 0.33;
constexpr double kEraseRatioMin = 0.3, kEraseRatioMax = 3.3;

double uniform(std::uint64_t& state) {
  return static_cast<double>(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return static_cast<std::uint8_t>(std::lround(std::fmin(std::fmax(v, 0.0), 255.0)));
  else
    return static_cast<T>(v);
}

}  // namespace

std::string AugmentOptions::describe() const {
  if (!any()) return "off";
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (rotate_deg > 0) add(slimtrain::detail::concat("rotate up to ", rotate_deg, " deg"));
  if (crop_padding > 0) add(slimtrain::detail::concat("random crop with padding ", crop_padding));
  if (flip) add("horizontal flip");
  if (erase_probability > 0) add(slimtrain::detail::concat("random erasing p ", erase_probability));
  return out;
}

Augmenter::Augmenter(const AugmentOptions& options, const std::vector<std::int64_t>& sample_shape,
                     ElementType type, std::uint64_t seed)
    : options_(options), type_(type), seed_(seed) {
  if (sample_shape.size() < 2)
    SLIMTRAIN_THROW(ConfigError,
                    "--augment-crop-padding/--augment-flip/--augment-rotate/--augment-erase: the "
                    "samples are "
                    "feature vectors [D], not images; train without augmentation");
  channels_ = sample_shape.size() == 3 ? sample_shape[0] : 1;
  height_ = sample_shape[sample_shape.size() - 2];
  width_ = sample_shape.back();
}

void Augmenter::apply(void* sample, std::int64_t row, std::int64_t epoch) const {
  if (type_ == ElementType::kUint8)
    apply_typed(static_cast<std::uint8_t*>(sample), row, epoch);
  else
    apply_typed(static_cast<float*>(sample), row, epoch);
}

template <typename T>
void Augmenter::apply_typed(T* sample, std::int64_t row, std::int64_t epoch) const {
  // One stream per (seed, epoch, row); the draws are taken in a fixed order whatever is enabled.
  std::uint64_t state = seed_ ^ 0x6a09e667f3bcc909ull;
  state = splitmix64(state) ^ (static_cast<std::uint64_t>(epoch) * 0xbb67ae8584caa73bull);
  state = splitmix64(state) ^ (static_cast<std::uint64_t>(row) * 0x3c6ef372fe94f82bull);
  const double u_angle = uniform(state), u_dx = uniform(state), u_dy = uniform(state),
               u_flip = uniform(state);
  // Drawn after the others, so that adding erasing left their draws as they were.
  const double u_erase = uniform(state), u_area = uniform(state), u_ratio = uniform(state),
               u_top = uniform(state), u_left = uniform(state);

  const std::int64_t h = height_, w = width_, plane = h * w;
  thread_local std::vector<double> scratch;  // one channel, rotated
  for (std::int64_t c = 0; c < channels_; ++c) {
    T* p = sample + c * plane;
    if (options_.rotate_deg > 0) {
      const double angle = (2 * u_angle - 1) * options_.rotate_deg * kPi / 180.0;
      const double cs = std::cos(angle), sn = std::sin(angle);
      const double cy = (h - 1) / 2.0, cx = (w - 1) / 2.0;
      scratch.assign(static_cast<std::size_t>(plane), 0.0);
      for (std::int64_t y = 0; y < h; ++y) {
        for (std::int64_t x = 0; x < w; ++x) {
          // The source point that lands on (x, y): the inverse rotation.
          const double sx = cs * (x - cx) + sn * (y - cy) + cx;
          const double sy = -sn * (x - cx) + cs * (y - cy) + cy;
          const double fx = std::floor(sx), fy = std::floor(sy);
          const auto x0 = static_cast<std::int64_t>(fx), y0 = static_cast<std::int64_t>(fy);
          const double ax = sx - fx, ay = sy - fy;
          double v = 0.0;
          for (int k = 0; k < 4; ++k) {
            const std::int64_t xx = x0 + (k & 1), yy = y0 + (k >> 1);
            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;  // zero outside
            const double weight = ((k & 1) ? ax : 1 - ax) * ((k >> 1) ? ay : 1 - ay);
            v += weight * static_cast<double>(p[yy * w + xx]);
          }
          scratch[static_cast<std::size_t>(y * w + x)] = v;
        }
      }
      for (std::int64_t i = 0; i < plane; ++i)
        p[i] = from_double<T>(scratch[static_cast<std::size_t>(i)]);
    }
    if (options_.crop_padding > 0) {
      const std::int64_t pad = options_.crop_padding, span = 2 * pad + 1;
      const auto dx = static_cast<std::int64_t>(u_dx * span) - pad;
      const auto dy = static_cast<std::int64_t>(u_dy * span) - pad;
      thread_local std::vector<T> shifted;  // no allocation per sample on the prefetch thread
      shifted.assign(static_cast<std::size_t>(plane), T(0));
      for (std::int64_t y = 0; y < h; ++y) {
        const std::int64_t sy = y + dy;
        if (sy < 0 || sy >= h) continue;
        for (std::int64_t x = 0; x < w; ++x) {
          const std::int64_t sx = x + dx;
          if (sx >= 0 && sx < w) shifted[static_cast<std::size_t>(y * w + x)] = p[sy * w + sx];
        }
      }
      std::memcpy(p, shifted.data(), static_cast<std::size_t>(plane) * sizeof(T));
    }
    if (options_.flip && u_flip < 0.5) {
      for (std::int64_t y = 0; y < h; ++y) std::reverse(p + y * w, p + y * w + w);
    }
  }
  if (u_erase < options_.erase_probability) {
    const double area = (kEraseAreaMin + u_area * (kEraseAreaMax - kEraseAreaMin)) * plane;
    const double ratio = std::exp(std::log(kEraseRatioMin) +
                                  u_ratio * (std::log(kEraseRatioMax) - std::log(kEraseRatioMin)));
    const std::int64_t eh = std::clamp<std::int64_t>(std::llround(std::sqrt(area * ratio)), 1, h);
    const std::int64_t ew = std::clamp<std::int64_t>(std::llround(std::sqrt(area / ratio)), 1, w);
    const auto top = static_cast<std::int64_t>(u_top * static_cast<double>(h - eh + 1));
    const auto left = static_cast<std::int64_t>(u_left * static_cast<double>(w - ew + 1));
    for (std::int64_t c = 0; c < channels_; ++c)
      for (std::int64_t y = top; y < top + eh; ++y)
        std::fill(sample + c * plane + y * w + left, sample + c * plane + y * w + left + ew, T(0));
  }
}

}  // namespace slimtrain::data
