#pragma once
/**
 * @brief Built-in text classifiers over named inputs (layout 2): input_ids [B, L] int64 and
 * attention_mask [B, L] (1 for real tokens), the vocabulary from the file's input_ids.
 *
 * text-bow is fastText's model: the mean of the tokens' embeddings (and, with text_bigrams
 * buckets, of hashed bigrams'), one linear layer: the strong, fast baseline. text-transformer is a
 * small encoder: token embeddings plus sinusoidal positions (any length), text_depth pre-norm
 * blocks (vit-tiny's) that do not attend to padding, mean pooling over real tokens, LayerNorm, a
 * linear head. Both return only logits: their token states are locals of forward.
 */
#include <torch/torch.h>

#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/vit_tiny.hpp"

namespace slimtrain::model {

/** @brief Base of the two: the inputs they take, and layout-1 batches refused. */
class TextClassifierImpl : public ClassifierImpl {
 public:
  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  bool gates_weights() const override { return true; }
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return spec().text_dim; }

 protected:
  explicit TextClassifierImpl(const ModelSpec& spec);
  /** @brief Pooled features [B, D] of ids [B, L] under mask [B, L]. */
  virtual torch::Tensor features(const torch::Tensor& ids, const torch::Tensor& mask) = 0;
  torch::nn::Linear head_{nullptr};
};

class TextBowImpl final : public TextClassifierImpl {
 public:
  explicit TextBowImpl(const ModelSpec& spec);

 protected:
  torch::Tensor features(const torch::Tensor& ids, const torch::Tensor& mask) override;

 private:
  torch::nn::Embedding embedding_{nullptr};
};

class TextTransformerImpl final : public TextClassifierImpl {
 public:
  bool recomputes_layers() const override { return true; }
  explicit TextTransformerImpl(const ModelSpec& spec);

 protected:
  torch::Tensor features(const torch::Tensor& ids, const torch::Tensor& mask) override;

 private:
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};

}  // namespace slimtrain::model
