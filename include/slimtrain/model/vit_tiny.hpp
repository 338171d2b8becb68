#pragma once
/**
 * @brief vit-tiny: patch embedding (a conv with stride = patch), learned position embedding,
 * vit_depth pre-norm encoder blocks, mean pooling over tokens, LayerNorm, a linear head.
 *
 * The [B, T, D] token states are locals of forward: the seeds' vision-language classifier
 * returned exactly these and its evaluation all-reduced them.
 */
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model {

/** @brief Multi-head self-attention: Linear layers around scaled dot-product attention. */
class SelfAttentionImpl : public torch::nn::Module {
 public:
  SelfAttentionImpl(std::int64_t dim, std::int64_t heads);
  /** @brief `padding` [B, T] bool (true: a pad token, which no token attends to) or undefined. */
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& padding = {});

 private:
  std::int64_t heads_;
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr};
};
TORCH_MODULE(SelfAttention);

/** @brief x + attn(LN(x)), then x + mlp(LN(x)); mlp hidden width 4 * dim with GELU. */
class EncoderBlockImpl : public torch::nn::Module {
 public:
  EncoderBlockImpl(std::int64_t dim, std::int64_t heads);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& padding = {});

 private:
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  SelfAttention attn_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(EncoderBlock);

class VitTinyImpl : public ClassifierImpl {
 public:
  explicit VitTinyImpl(const ModelSpec& spec);
  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  torch::Tensor embed(const torch::Tensor& x) override;
  bool gates_weights() const override { return true; }
  bool recomputes_layers() const override { return true; }
  std::int64_t embedding_dim() const override { return spec().vit_dim; }

 private:
  torch::nn::Conv2d patch_embed_{nullptr};
  torch::Tensor position_;
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace slimtrain::model
