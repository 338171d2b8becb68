#pragma once
/**
 * @brief A HuggingFace image processor's preprocessor_config.json, read for `prep images
 * --preprocessor`: the size images are brought to, and the rescale and normalisation folded into
 * the mean and std stored on the file (pixel = (x * rescale - image_mean) / image_std is
 * (x - image_mean / rescale) / (image_std / rescale) on the stored uint8).
 */
#include <string>
#include <vector>

namespace slimtrain::cli {

struct ImagePreprocessor {
  int height = 0, width = 0;     ///< 0: no resize asked for
  std::vector<float> mean, std;  ///< per channel, in the stored units (0..255)
  int resample = 2;              ///< PIL's filter number: 2 bilinear (what prep images does)
};

/**
 * @brief ConfigError naming the file and the key: a size given only as shortest_edge, a center
 * crop, or mean and std of another length than `channels`.
 */
ImagePreprocessor read_image_preprocessor(const std::string& path, int channels);

}  // namespace slimtrain::cli
