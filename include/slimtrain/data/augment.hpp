#pragma once
/**
 * @brief Training-time augmentation of image samples, in their stored units before
 * normalisation (so padding is a black pixel, as torchvision pads before ToTensor): a small
 * rotation, a random crop of the sample padded with zeros (a random shift), a horizontal flip,
 * and random erasing (a black rectangle). Each sample's draws come from (seed, epoch, source row) alone, so an epoch's
 * augmentation does not depend on the rank count, the batch or the thread, and a resumed run
 * stays bit-identical. Evaluation never augments: only the training loader holds an Augmenter.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

struct AugmentOptions {
  /** @brief Pad every side by P zero pixels, then crop H x W at a random offset (0: off). */
  int crop_padding = 0;
  /** @brief Mirror left-right with probability 1/2. */
  bool flip = false;
  /** @brief Rotate by a uniform angle in [-deg, deg] about the centre, bilinear, zero fill. */
  double rotate_deg = 0.0;
  /**
   * @brief With this probability, black out a rectangle of 2-33 % of the image's area with an
   * aspect ratio in [0.3, 3.3] (log-uniform), in every channel: random erasing (Zhong et al.,
   * 2017), with torchvision's RandomErasing ranges, last of the transforms.
   */
  double erase_probability = 0.0;

  bool any() const {
    return crop_padding > 0 || flip || rotate_deg > 0.0 || erase_probability > 0.0;
  }
  /** @brief "rotate up to 10 deg, random crop with padding 4, horizontal flip" or "off". */
  std::string describe() const;
};

class Augmenter {
 public:
  /**
   * @brief For samples of `sample_shape` as stored ([H, W] or [C, H, W]) of `type`; ConfigError
   * naming the --augment options for feature vectors ([D]).
   */
  Augmenter(const AugmentOptions& options, const std::vector<std::int64_t>& sample_shape,
            ElementType type, std::uint64_t seed);
  /** @brief Transforms one stored sample in place: source row `row` in `epoch`. */
  void apply(void* sample, std::int64_t row, std::int64_t epoch) const;

 private:
  template <typename T>
  void apply_typed(T* sample, std::int64_t row, std::int64_t epoch) const;

  AugmentOptions options_;
  ElementType type_;
  std::uint64_t seed_;
  std::int64_t channels_ = 1, height_ = 0, width_ = 0;
};

}  // namespace slimtrain::data
