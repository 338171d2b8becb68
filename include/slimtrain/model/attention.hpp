#pragma once
/**
 * @brief Scaled dot-product attention for the built-in transformers (vit-tiny, text-transformer):
 * LibTorch's fused kernel where it has one (2.x: at::scaled_dot_product_attention, which picks a
 * flash, memory-efficient or cuDNN kernel on GPUs and a flash kernel on CPUs), else the two matrix
 * products and a softmax written out (LibTorch 1.13). Both give the same values within 1e-5 in
 * float32 (tests/unit/test_attention.cpp).
 */
#include <torch/torch.h>

namespace slimtrain::model {

/** @brief Whether this LibTorch has the fused kernel (2.0 and later). */
bool fused_attention_available();

/**
 * @brief softmax(q k^T / sqrt(d)) v over q, k, v [B, heads, T, d]; `padding` [B, T] bool (true: a
 * pad token, which no query attends to) or undefined. `fused` false writes it out even where the
 * fused kernel exists (the tests compare the two). Every row needs a key that is not padding.
 * `dropout` drops attention weights with that probability (training; the HuggingFace encoders').
 */
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& padding, bool fused = true, double dropout = 0.0);

}  // namespace slimtrain::model
