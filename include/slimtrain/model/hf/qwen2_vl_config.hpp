#pragma once
/**
 * @brief Qwen2-VL's and Qwen2.5-VL's config.json (model_type "qwen2_vl", "qwen2_5_vl"): the
 * language model's fields, at the top level as the original checkpoints have them or under
 * text_config as transformers 5 writes them, Qwen2's decoder with multimodal rotary positions;
 * the vision tower's under vision_config; the image token's id. Free of LibTorch.
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/decoder_config.hpp"

namespace slimtrain::model::hf {

/** @brief vision_config, by Qwen2-VL's names or Qwen2.5-VL's. */
struct VisionConfig {
  /** @brief Qwen2.5-VL's tower: RMSNorm, a gated feed-forward with biases, window attention. */
  bool windowed = false;
  std::int64_t depth = 0, width = 0, heads = 0;  ///< embed_dim (2) or hidden_size (2.5)
  std::int64_t mlp_width = 0;  ///< embed_dim * mlp_ratio (2) or intermediate_size (2.5)
  std::int64_t out_width = 0;  ///< the language model's: hidden_size (2) or out_hidden_size (2.5)
  std::int64_t in_channels = 3, patch_size = 14, temporal_patch_size = 2, spatial_merge_size = 2;
  std::int64_t window_size = 112;                   ///< 2.5: pixels of a window's side
  std::vector<std::int64_t> fullatt_block_indexes;  ///< 2.5: the blocks that see the whole image
  std::string hidden_act = "quick_gelu";            ///< silu for 2.5
  double rope_theta = 10000.0;
  double initializer_range = 0.02;

  /** @brief C x T x P x P: one flattened patch, as the processor writes pixel_values' rows. */
  std::int64_t patch_elements() const {
    return in_channels * temporal_patch_size * patch_size * patch_size;
  }
};

struct Qwen2VLConfig : DecoderConfig {
  VisionConfig vision;
  std::int64_t image_token_id = 151655;
  std::int64_t vision_start_token_id = 151652, vision_end_token_id = 151653;

 protected:
  std::string describe_more() const override;
};

/** @brief A Qwen2-VL (`windowed` false) or Qwen2.5-VL config from config.json. */
std::shared_ptr<const HfConfig> read_qwen2_vl_config(const ConfigReader& r, bool windowed);

}  // namespace slimtrain::model::hf
