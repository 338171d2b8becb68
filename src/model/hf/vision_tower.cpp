#include "slimtrain/model/hf/vision_tower.hpp"

#include <algorithm>

#include "slimtrain/model/attention.hpp"
#include "slimtrain/model/hf/decoder_body.hpp"
#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/lora.hpp"

namespace slimtrain::model::hf {
namespace {

namespace nn = torch::nn;
constexpr double kVisionEps = 1e-6;

torch::Tensor rotate_half(const torch::Tensor& x) {
  const std::int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// Each patch's row and column in its image, the patches of a merge block next to each other, as
// the processor orders them; every frame alike.
torch::Tensor patch_positions(const std::vector<Grid>& grids, std::int64_t merge) {
  std::vector<torch::Tensor> all;
  for (const Grid& g : grids) {
    const std::int64_t t = g[0], h = g[1], w = g[2];
    const auto order = [&](const torch::Tensor& p) {
      return p.reshape({h / merge, merge, w / merge, merge}).permute({0, 2, 1, 3}).flatten();
    };
    const torch::Tensor rows = torch::arange(h, torch::kInt64).unsqueeze(1).expand({h, w});
    const torch::Tensor cols = torch::arange(w, torch::kInt64).unsqueeze(0).expand({h, w});
    all.push_back(torch::stack({order(rows), order(cols)}, -1).repeat({t, 1}));
  }
  return torch::cat(all, 0);
}

// Qwen2.5-VL's windows: the merge blocks of each frame grouped into windows of `cells` blocks a
// side (the last ones cut by the image's edge), in window order; the blocks' new order and the
// windows' lengths in patches.
void window_order(const std::vector<Grid>& grids, std::int64_t merge, std::int64_t cells,
                  std::vector<std::int64_t>& order, std::vector<std::int64_t>& lengths) {
  std::int64_t first = 0;
  for (const Grid& g : grids) {
    const std::int64_t t = g[0], h = g[1] / merge, w = g[2] / merge;
    for (std::int64_t f = 0; f < t; ++f)
      for (std::int64_t wr = 0; wr * cells < h; ++wr)
        for (std::int64_t wc = 0; wc * cells < w; ++wc) {
          std::int64_t count = 0;
          for (std::int64_t r = wr * cells; r < std::min(h, (wr + 1) * cells); ++r)
            for (std::int64_t c = wc * cells; c < std::min(w, (wc + 1) * cells); ++c) {
              order.push_back(first + (f * h + r) * w + c);
              ++count;
            }
          lengths.push_back(count * merge * merge);
        }
    first += t * h * w;
  }
}

}  // namespace

VisionTower::VisionTower(nn::Module& base, const VisionConfig& config) : config_(config) {
  const VisionConfig& c = config_;
  const std::int64_t d = c.width;
  const double init = c.initializer_range;
  {
    torch::NoGradGuard no_grad;
    patch_weight_ =
        group(base, "patch_embed")
            ->register_module("proj", std::make_shared<nn::Module>())
            ->register_parameter("weight", torch::empty({d, c.in_channels, c.temporal_patch_size,
                                                         c.patch_size, c.patch_size}));
    nn::init::normal_(patch_weight_, 0.0, init);
  }
  auto list = base.register_module("blocks", nn::ModuleList());
  for (std::int64_t i = 0; i < c.depth; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    Block b;
    if (c.windowed) {
      b.rms1 = add_rms_weight(*block, "norm1", d);
      b.rms2 = add_rms_weight(*block, "norm2", d);
    } else {
      b.norm1 = add_norm(*block, "norm1", d, kVisionEps);
      b.norm2 = add_norm(*block, "norm2", d, kVisionEps);
    }
    auto attn = group(*block, "attn");
    b.qkv = add_linear(*attn, "qkv", d, 3 * d, init);
    b.proj = add_linear(*attn, "proj", d, d, init);
    auto mlp = group(*block, "mlp");
    if (c.windowed) {
      b.gate_proj = add_linear(*mlp, "gate_proj", d, c.mlp_width, init);
      b.up_proj = add_linear(*mlp, "up_proj", d, c.mlp_width, init);
      b.down_proj = add_linear(*mlp, "down_proj", c.mlp_width, d, init);
    } else {
      b.fc1 = add_linear(*mlp, "fc1", d, c.mlp_width, init);
      b.fc2 = add_linear(*mlp, "fc2", c.mlp_width, d, init);
    }
    blocks_.push_back(b);
  }
  auto merger = group(base, "merger");
  if (c.windowed)
    merger_rms_ = add_rms_weight(*merger, "ln_q", d);
  else
    merger_norm_ = add_norm(*merger, "ln_q", d, kVisionEps);
  const std::int64_t merged = d * c.spatial_merge_size * c.spatial_merge_size;
  auto mlp = group(*merger, "mlp");
  merger_in_ = add_linear(*mlp, "0", merged, merged, init);
  merger_out_ = add_linear(*mlp, "2", merged, c.out_width, init);
}

torch::Tensor VisionTower::norm(const nn::LayerNorm& layer, const torch::Tensor& rms,
                                const torch::Tensor& x) const {
  if (config_.windowed) return rms_norm(x, rms, kVisionEps);
  return const_cast<nn::LayerNorm&>(layer)->forward(x);
}

torch::Tensor VisionTower::block_forward(Block& b, const torch::Tensor& x, const torch::Tensor& cos,
                                         const torch::Tensor& sin,
                                         const std::vector<std::int64_t>& segments) {
  const std::int64_t n = x.size(0), heads = config_.heads, hd = config_.width / heads;
  const torch::Tensor qkv = lora_linear(b.qkv, norm(b.norm1, b.rms1, x)).view({n, 3, heads, hd});
  // Rotary in float32, as transformers' apply_rotary_pos_emb_vision.
  const auto turn = [&](const torch::Tensor& t) {
    const torch::Tensor f = t.to(torch::kFloat32);
    return (f * cos + rotate_half(f) * sin).to(t.scalar_type());
  };
  const torch::Tensor q = turn(qkv.select(1, 0)), k = turn(qkv.select(1, 1)), v = qkv.select(1, 2);
  std::vector<torch::Tensor> parts;
  std::int64_t at = 0;
  for (const std::int64_t len : segments) {  // one frame, or one window: no attention across
    const auto piece = [&](const torch::Tensor& t) {
      return t.narrow(0, at, len).transpose(0, 1).unsqueeze(0);  // [1, heads, len, hd]
    };
    parts.push_back(attention(piece(q), piece(k), piece(v), {}, true, 0.0)
                        .squeeze(0)
                        .transpose(0, 1)
                        .reshape({len, heads * hd}));
    at += len;
  }
  torch::Tensor h = x + lora_linear(b.proj, torch::cat(parts, 0));
  const torch::Tensor m = norm(b.norm2, b.rms2, h);
  if (config_.windowed)
    return h +
           lora_linear(b.down_proj, activation(config_.hidden_act, lora_linear(b.gate_proj, m)) *
                                        lora_linear(b.up_proj, m));
  return h + lora_linear(b.fc2, activation(config_.hidden_act, lora_linear(b.fc1, m)));
}

torch::Tensor VisionTower::forward(const torch::Tensor& patches, const std::vector<Grid>& grids,
                                   bool /*training*/) {
  const VisionConfig& c = config_;
  const std::int64_t merge = c.spatial_merge_size, unit = merge * merge;
  const std::int64_t hd = c.width / c.heads;
  // The 3D convolution over a patch whose kernel is the whole patch: one matrix product.
  torch::Tensor x = torch::matmul(patches.to(patch_weight_.scalar_type()),
                                  patch_weight_.reshape({c.width, -1}).t());
  const std::int64_t n = x.size(0);
  // 2D rotary: a quarter of the head's frequencies for the row, a quarter for the column, twice.
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const double quarter = static_cast<double>(hd / 2);
  const torch::Tensor inv_freq =
      1.0 / torch::pow(c.rope_theta, torch::arange(0, hd / 2, 2, f32) / quarter);
  const torch::Tensor freqs =
      (patch_positions(grids, merge).to(torch::kFloat32).unsqueeze(-1) * inv_freq).flatten(1);
  torch::Tensor angles = torch::cat({freqs, freqs}, -1).to(x.device());  // [N, hd]
  std::vector<std::int64_t> full, windows, order;
  for (const Grid& g : grids)
    for (std::int64_t f = 0; f < g[0]; ++f) full.push_back(g[1] * g[2]);
  torch::Tensor window_index;
  if (c.windowed) {
    window_order(grids, merge, c.window_size / merge / c.patch_size, order, windows);
    window_index = torch::tensor(order, torch::kInt64).to(x.device());
    const auto permute = [&](const torch::Tensor& t) {
      return t.reshape({n / unit, unit, -1}).index_select(0, window_index).reshape({n, -1});
    };
    x = permute(x);
    angles = permute(angles);
  }
  const torch::Tensor cos = angles.cos().unsqueeze(1), sin = angles.sin().unsqueeze(1);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    const bool whole =
        !c.windowed || std::find(c.fullatt_block_indexes.begin(), c.fullatt_block_indexes.end(),
                                 static_cast<std::int64_t>(i)) != c.fullatt_block_indexes.end();
    x = block_forward(blocks_[i], x, cos, sin, whole ? full : windows);
  }
  torch::Tensor merged = norm(merger_norm_, merger_rms_, x).reshape({n / unit, c.width * unit});
  merged = lora_linear(merger_out_, torch::gelu(lora_linear(merger_in_, merged)));
  if (c.windowed) merged = merged.index_select(0, torch::argsort(window_index));
  return merged;
}

}  // namespace slimtrain::model::hf
