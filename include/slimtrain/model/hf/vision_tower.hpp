#pragma once
/**
 * @brief Qwen2-VL's and Qwen2.5-VL's vision tower, under the checkpoint's names (patch_embed,
 * blocks.N.{norm1, attn.qkv, attn.proj, norm2, mlp}, merger): each image's flattened patches
 * embedded by a 3D convolution (temporal_patch_size x patch_size x patch_size, no bias), turned
 * by 2D rotary positions, through pre-norm blocks whose attention stays within one frame of one
 * image (Qwen2.5-VL: within windows of window_size pixels, but in fullatt_block_indexes), and the
 * patch merger: each spatial_merge_size x spatial_merge_size block of patches normalised,
 * concatenated and projected to the language model's width. Qwen2-VL: LayerNorm, QuickGELU
 * feed-forward; Qwen2.5-VL: RMSNorm, gated SiLU feed-forward. Its features stay in the model.
 */
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <vector>

#include "slimtrain/model/hf/qwen2_vl_config.hpp"

namespace slimtrain::model::hf {

/** @brief One image's grid: frames (after the temporal patch), rows and columns of patches. */
using Grid = std::array<std::int64_t, 3>;

class VisionTower {
 public:
  /** @brief Registers its parameters under `base` ("model.visual." or "visual."). */
  VisionTower(torch::nn::Module& base, const VisionConfig& config);
  /**
   * @brief The merged features [sum of t*h*w / merge^2, out_width] of `patches`
   * [sum of t*h*w, C*T*P*P] (the images' patches one after the other, in the processor's order)
   * whose grids are `grids`.
   */
  torch::Tensor forward(const torch::Tensor& patches, const std::vector<Grid>& grids,
                        bool training);

 private:
  struct Block {
    torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};  ///< Qwen2-VL
    torch::Tensor rms1, rms2;                             ///< Qwen2.5-VL's RMSNorm weights
    torch::nn::Linear qkv{nullptr}, proj{nullptr};
    torch::nn::Linear fc1{nullptr}, fc2{nullptr};                                ///< Qwen2-VL
    torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};  ///< 2.5
  };
  torch::Tensor norm(const torch::nn::LayerNorm& layer, const torch::Tensor& rms,
                     const torch::Tensor& x) const;
  torch::Tensor block_forward(Block& b, const torch::Tensor& x, const torch::Tensor& cos,
                              const torch::Tensor& sin, const std::vector<std::int64_t>& segments);

  VisionConfig config_;
  torch::Tensor patch_weight_;  ///< patch_embed.proj.weight [width, C, T, P, P]
  std::vector<Block> blocks_;
  torch::nn::LayerNorm merger_norm_{nullptr};                   ///< merger.ln_q (Qwen2-VL)
  torch::Tensor merger_rms_;                                    ///< merger.ln_q.weight (Qwen2.5-VL)
  torch::nn::Linear merger_in_{nullptr}, merger_out_{nullptr};  ///< merger.mlp.0, merger.mlp.2
};

}  // namespace slimtrain::model::hf
