#pragma once
/**
 * @brief The decoder's body, under the checkpoint's names (embed_tokens, layers.N.self_attn.q_proj,
 * ..., norm): token embeddings; layers of RMSNorm, grouped-query causal self-attention with rotary
 * positions, RMSNorm and a gated feed-forward, each added to its input; a final RMSNorm. The text
 * decoders (decoder.hpp) and Qwen2-VL's language model (qwen2_vl.hpp) build on it; the rotary
 * positions are one sequence for the batch (text) or three per token (M-RoPE).
 */
#include <torch/torch.h>

#include <memory>
#include <utility>
#include <vector>

#include "slimtrain/model/hf/decoder_config.hpp"
#include "slimtrain/model/hf/hf_model.hpp"

namespace slimtrain::model::hf {

/** @brief RMSNorm of x with `weight`, computed in float32 as transformers does. */
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

class DecoderBody {
 public:
  /** @brief Registers its parameters under `base` ("model." or "model.language_model."). */
  DecoderBody(torch::nn::Module& base, std::shared_ptr<const DecoderConfig> config);
  /** @brief The token embeddings of `ids` [B, T]; `gate` (may be empty) called first. */
  torch::Tensor embed(const torch::Tensor& ids, const ClassifierImpl::WeightGate& gate = {});
  /**
   * @brief Rotary cos and sin, in float32 as transformers computes them, cast to `dtype`: of
   * `positions` [T] (the same for every sequence) as [T, head_dim], or of M-RoPE positions
   * [3, B, T] as [B, 1, T, head_dim].
   */
  std::pair<torch::Tensor, torch::Tensor> rotary(const torch::Tensor& positions,
                                                 torch::ScalarType dtype) const;
  /** @brief The layers and the final norm over embeddings x [B, T, H]; `real` [B, T] marks the
   * tokens that are not padding; `gate` (may be empty) called before each layer and the norm
   * with their weights and input; with `recompute` each layer's activations are made again in
   * backward (recompute.hpp). */
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& real, bool training,
                        const ClassifierImpl::WeightGate& gate = {}, bool recompute = false);
  /** @brief The trainer's grad sink (ClassifierImpl::grad_sink), which the layers' linear
   * projections offer their weight gradients to; null: autograd's. */
  void set_grad_sink(GradSink* sink) { sink_ = sink; }
  /** @brief Each sequence's last real token's hidden state [B, H], padding on either side. */
  static torch::Tensor last_token(const torch::Tensor& hidden, const torch::Tensor& real);

 private:
  struct Layer {
    torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
    torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
    torch::Tensor input_layernorm, post_attention_layernorm;  ///< RMSNorm weights
    /** @brief What each part reads, for the gate, in the order it reads them: the attention and
     * its norm, the feed-forward's norm and its gate and up projections, its down projection (a
     * 7B layer's parts are 0.2, 0.27 and 0.14 billion parameters). */
    std::vector<torch::Tensor> attention_weights, mlp_weights, down_weights;
  };
  torch::Tensor layer_forward(Layer& l, const torch::Tensor& x, const torch::Tensor& cos,
                              const torch::Tensor& sin, const torch::Tensor& allowed, bool training,
                              const ClassifierImpl::WeightGate& gate);

  std::shared_ptr<const DecoderConfig> config_;
  torch::nn::Embedding embed_tokens_{nullptr};
  std::vector<Layer> layers_;
  torch::Tensor norm_;
  GradSink* sink_ = nullptr;
};

}  // namespace slimtrain::model::hf
