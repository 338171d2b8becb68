#include "slimtrain/model/vit_tiny.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/attention.hpp"

namespace slimtrain::model {

SelfAttentionImpl::SelfAttentionImpl(std::int64_t dim, std::int64_t heads) : heads_(heads) {
  qkv_ = register_module("qkv", torch::nn::Linear(dim, 3 * dim));
  proj_ = register_module("proj", torch::nn::Linear(dim, dim));
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& padding) {
  const auto b = x.size(0), t = x.size(1), d = x.size(2);
  // [B, T, 3, heads, hd] -> [3, B, heads, T, hd]
  const auto qkv = qkv_->forward(x).reshape({b, t, 3, heads_, d / heads_}).permute({2, 0, 3, 1, 4});
  const auto mixed = attention(qkv[0], qkv[1], qkv[2], padding);
  return proj_->forward(mixed.transpose(1, 2).reshape({b, t, d}));
}

EncoderBlockImpl::EncoderBlockImpl(std::int64_t dim, std::int64_t heads) {
  using torch::nn::LayerNormOptions;
  norm1_ = register_module("norm1", torch::nn::LayerNorm(LayerNormOptions({dim})));
  attn_ = register_module("attn", SelfAttention(dim, heads));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(LayerNormOptions({dim})));
  fc1_ = register_module("fc1", torch::nn::Linear(dim, 4 * dim));
  fc2_ = register_module("fc2", torch::nn::Linear(4 * dim, dim));
}

torch::Tensor EncoderBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& padding) {
  auto h = x + attn_->forward(norm1_->forward(x), padding);
  return h + fc2_->forward(torch::gelu(fc1_->forward(norm2_->forward(h))));
}

VitTinyImpl::VitTinyImpl(const ModelSpec& spec) : ClassifierImpl(spec) {
  const auto [c, h, w] = image_shape(spec);
  const auto p = spec.vit_patch, dim = spec.vit_dim;
  if (p <= 0 || h % p != 0 || w % p != 0) {
    SLIMTRAIN_THROW(ConfigError, "--vit-patch: ", p, " must be positive and divide the ", h, "x", w,
                    " images of the data (--model vit-tiny)");
  }
  if (spec.vit_heads <= 0 || dim <= 0 || dim % spec.vit_heads != 0) {
    SLIMTRAIN_THROW(ConfigError, "--vit-dim: ", dim, " must be a positive multiple of --vit-heads ",
                    spec.vit_heads, " (--model vit-tiny)");
  }
  if (spec.vit_depth < 1) {
    SLIMTRAIN_THROW(ConfigError, "--vit-depth: ", spec.vit_depth, " must be at least 1");
  }
  namespace nn = torch::nn;
  patch_embed_ = register_module("patch_embed", nn::Conv2d(nn::Conv2dOptions(c, dim, p).stride(p)));
  const auto tokens = (h / p) * (w / p);
  position_ = register_parameter("position", torch::randn({1, tokens, dim}) * 0.02);
  blocks_ = register_module("blocks", nn::ModuleList());
  for (std::int64_t i = 0; i < spec.vit_depth; ++i)
    blocks_->push_back(EncoderBlock(dim, spec.vit_heads));
  norm_ = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({dim})));
  head_ = register_module("head", nn::Linear(dim, spec.num_classes));
}

torch::Tensor VitTinyImpl::embed(const torch::Tensor& x) {
  // [B, D, H/p, W/p] -> [B, T, D]: these token states never leave this function.
  await_weights(*patch_embed_);
  await_weights(position_);
  auto tokens = patch_embed_->forward(as_images(x)).flatten(2).transpose(1, 2) + position_;
  for (const auto& block : *blocks_) {
    await_weights(*block, tokens);
    EncoderBlockImpl* b = block->as<EncoderBlock>();
    tokens = run_layer([b](const torch::Tensor& h) { return b->forward(h); }, tokens);
  }
  await_weights(*norm_, tokens);
  return norm_->forward(tokens.mean(1));
}

Output VitTinyImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  const torch::Tensor features = embed(x);
  await_weights(*head_, features);
  return make_output(head_->forward(features), y);
}

}  // namespace slimtrain::model
