#pragma once
/**
 * @brief The post-norm encoder layer of BERT, RoBERTa and DistilBERT: self-attention, added to its
 * input and normalised, then a feed-forward, added and normalised. Each architecture registers
 * its pieces under its own names (bert.cpp, distilbert.cpp); the computation is this one.
 */
#include <torch/torch.h>

#include <string>

namespace slimtrain::model::hf {

struct PostNormLayer {
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, attention_out{nullptr};
  torch::nn::LayerNorm attention_norm{nullptr};
  torch::nn::Linear intermediate{nullptr}, output{nullptr};
  torch::nn::LayerNorm output_norm{nullptr};

  /** @brief How the layer computes, from its architecture's config. */
  struct Settings {
    std::int64_t heads = 1;
    std::string activation;  ///< hidden_act
    double hidden_dropout = 0, attention_dropout = 0;
  };
  /** @brief x [B, T, H]; `padding` [B, T] true on pad tokens (every row keeps a key). */
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& padding,
                        const Settings& settings, bool training);
};

/** @brief `mask == 0`, except that a sequence with no token keeps its first position: a row
 * with no key would give NaN. */
torch::Tensor padding_of(const torch::Tensor& mask);

}  // namespace slimtrain::model::hf
