#include "slimtrain/model/hf/decoder_body.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "slimtrain/model/deferred_weights.hpp"
#include "slimtrain/model/lora.hpp"
#include "slimtrain/model/recompute.hpp"

namespace slimtrain::model::hf {
namespace {

namespace nn = torch::nn;

// Rotary embedding: the first and second halves of the head's features as the two coordinates.
torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const std::int64_t half = x.size(-1) / 2;
  const torch::Tensor turned = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + turned * sin;
}

torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                     const torch::Tensor& allowed, double dropout) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, allowed, dropout);
#else
  auto scores =
      torch::matmul(q * (1.0 / std::sqrt(static_cast<double>(q.size(-1)))), k.transpose(-2, -1));
  scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<float>::infinity());
  torch::Tensor weights = torch::softmax(scores, -1);
  if (dropout > 0.0) weights = torch::dropout(weights, dropout, true);
  return torch::matmul(weights, v);
#endif
}

// The rotary inverse frequencies [head_dim / 2], scaled as the rope_type says, in transformers'
// order of float32 operations (modeling_rope_utils.py).
torch::Tensor rotary_frequencies(const DecoderConfig& c, const torch::TensorOptions& f32) {
  const RopeConfig& r = c.rope;
  const double dim = static_cast<double>(c.head_dim);
  const torch::Tensor inv_freq =
      1.0 / torch::pow(r.rope_theta, torch::arange(0, c.head_dim, 2, f32) / dim);
  if (r.rope_type == "linear") return inv_freq / r.factor;
  if (r.rope_type != "llama3") return inv_freq;
  // Llama 3.1: wavelengths longer than the pretrained context / low_freq_factor are stretched
  // by the factor, those shorter than it / high_freq_factor kept, the ones between blended.
  const double context = static_cast<double>(r.original_max_position_embeddings);
  const double low = r.low_freq_factor, high = r.high_freq_factor;
  const torch::Tensor wavelength = 2 * 3.141592653589793 / inv_freq;  // math.pi
  torch::Tensor scaled = torch::where(wavelength > context / low, inv_freq / r.factor, inv_freq);
  const torch::Tensor smooth = (context / wavelength - low) / (high - low);
  const torch::Tensor blended = (1 - smooth) * scaled / r.factor + smooth * scaled;
  const torch::Tensor medium = (wavelength >= context / high) & (wavelength <= context / low);
  return torch::where(medium, blended, scaled);
}

}  // namespace

namespace {

// The CPU generator's state, put back when this goes out of scope.
class RandomStateKept {
 public:
  RandomStateKept() {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    state_ = gen.get_state();
  }
  ~RandomStateKept() {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state_);
  }
  RandomStateKept(const RandomStateKept&) = delete;
  RandomStateKept& operator=(const RandomStateKept&) = delete;

 private:
  at::Tensor state_;
};

}  // namespace

DecoderBody::DecoderBody(nn::Module& base, std::shared_ptr<const DecoderConfig> config)
    : config_(std::move(config)) {
  const DecoderConfig& c = *config_;
  const std::int64_t h = c.hidden_size, d = c.head_dim, inner = c.intermediate_size;
  const double init = c.initializer_range;
  // What the body draws, or does not draw under a DeferredWeights scope, leaves the generator as
  // it found it: the head and the adapters made after are the same on every path.
  const RandomStateKept kept;
  // Under the scope the body's weights are the load's to fill: none is drawn (a 7B body's draws
  // took 90 s of a 130 s start-up).
  const bool filled = deferring();
  // Under a DeferredWeights scope each part's memory goes as soon as it is made: at most one
  // layer (or the embeddings) exists at once, and the loading fills each rank's slices.
  embed_tokens_ = add_embedding(base, "embed_tokens", c.vocab_size, h, init, filled);
  defer_memory(embed_tokens_->parameters());
  auto list = base.register_module("layers", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = group(*block, "self_attn");
    Layer l;
    l.q_proj =
        add_linear(*attention, "q_proj", h, c.num_attention_heads * d, init, c.qkv_bias, filled);
    l.k_proj =
        add_linear(*attention, "k_proj", h, c.num_key_value_heads * d, init, c.qkv_bias, filled);
    l.v_proj =
        add_linear(*attention, "v_proj", h, c.num_key_value_heads * d, init, c.qkv_bias, filled);
    l.o_proj =
        add_linear(*attention, "o_proj", c.num_attention_heads * d, h, init, c.o_bias, filled);
    auto mlp = group(*block, "mlp");
    l.gate_proj = add_linear(*mlp, "gate_proj", h, inner, init, c.mlp_bias, filled);
    l.up_proj = add_linear(*mlp, "up_proj", h, inner, init, c.mlp_bias, filled);
    l.down_proj = add_linear(*mlp, "down_proj", inner, h, init, c.mlp_bias, filled);
    l.input_layernorm = add_rms_weight(*block, "input_layernorm", h);
    l.post_attention_layernorm = add_rms_weight(*block, "post_attention_layernorm", h);
    // In the order forward uses them: the gradient buckets start in the reverse (LayerGate).
    l.attention_weights = {l.input_layernorm};
    for (const torch::Tensor& w : attention->parameters()) l.attention_weights.push_back(w);
    l.mlp_weights = {l.post_attention_layernorm};
    for (const auto* proj : {&l.gate_proj, &l.up_proj})
      for (const torch::Tensor& w : (*proj)->parameters()) l.mlp_weights.push_back(w);
    l.down_weights = l.down_proj->parameters();
    layers_.push_back(l);
    defer_memory(block->parameters());
  }
  norm_ = add_rms_weight(base, "norm", h);
  defer_memory({norm_});
}

torch::Tensor DecoderBody::embed(const torch::Tensor& ids, const ClassifierImpl::WeightGate& gate) {
  if (gate) gate(embed_tokens_->parameters(), ids);  // a lookup: its backward reads no weight
  return embed_tokens_->forward(ids);
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const torch::Tensor f = x.to(torch::kFloat32);
  const torch::Tensor normed = f * torch::rsqrt(f.pow(2).mean(-1, true) + eps);
  return weight * normed.to(x.scalar_type());
}

std::pair<torch::Tensor, torch::Tensor> DecoderBody::rotary(const torch::Tensor& positions,
                                                            torch::ScalarType dtype) const {
  const DecoderConfig& c = *config_;
  const auto f32 = positions.options().dtype(torch::kFloat32);
  const torch::Tensor inv_freq = rotary_frequencies(c, f32);
  torch::Tensor angles;
  if (positions.dim() == 1) {  // [T]: the same positions for every sequence
    angles = torch::outer(positions.to(torch::kFloat32), inv_freq);
  } else {
    // [3, B, T]: each frequency turned by the position of its section's axis (M-RoPE), the
    // sections (temporal, height, width, temporal, ...) in mrope_section's order.
    std::vector<std::int64_t> axis;
    for (std::size_t s = 0; s < c.rope.mrope_section.size(); ++s)
      axis.insert(axis.end(), static_cast<std::size_t>(c.rope.mrope_section[s]),
                  static_cast<std::int64_t>(s % 3));
    const torch::Tensor pick = torch::tensor(axis, positions.options().dtype(torch::kInt64));
    angles = positions.to(torch::kFloat32).index_select(0, pick).permute({1, 2, 0}) * inv_freq;
  }
  torch::Tensor both = torch::cat({angles, angles}, -1);
  if (positions.dim() != 1) both = both.unsqueeze(1);  // [B, 1, T, D]: one for every head
  return {both.cos().to(dtype), both.sin().to(dtype)};
}

torch::Tensor DecoderBody::layer_forward(Layer& l, const torch::Tensor& x, const torch::Tensor& cos,
                                         const torch::Tensor& sin, const torch::Tensor& allowed,
                                         bool training, const ClassifierImpl::WeightGate& gate) {
  const DecoderConfig& c = *config_;
  const std::int64_t b = x.size(0), t = x.size(1), d = c.head_dim;
  const torch::Tensor n = rms_norm(x, l.input_layernorm, c.rms_norm_eps);
  auto heads = [&](nn::Linear& proj, std::int64_t count) {
    return lora_linear(proj, n, sink_).view({b, t, count, d}).transpose(1, 2);
  };
  const torch::Tensor q = rotate(heads(l.q_proj, c.num_attention_heads), cos, sin);
  torch::Tensor k = rotate(heads(l.k_proj, c.num_key_value_heads), cos, sin);
  torch::Tensor v = heads(l.v_proj, c.num_key_value_heads);
  const std::int64_t groups = c.num_attention_heads / c.num_key_value_heads;
  if (groups > 1) {  // each key and value head serves `groups` query heads
    k = k.repeat_interleave(groups, 1);
    v = v.repeat_interleave(groups, 1);
  }
  const double p = training ? c.attention_dropout : 0.0;
  const torch::Tensor context =
      attend(q, k, v, allowed, p).transpose(1, 2).reshape({b, t, c.num_attention_heads * d});
  const torch::Tensor a = x + lora_linear(l.o_proj, context, sink_);
  if (gate) gate(l.mlp_weights, a);
  const torch::Tensor m = rms_norm(a, l.post_attention_layernorm, c.rms_norm_eps);
  const torch::Tensor gated = activation(c.hidden_act, lora_linear(l.gate_proj, m, sink_));
  const torch::Tensor h = gated * lora_linear(l.up_proj, m, sink_);
  // The down projection gathered apart: a 7B layer's feed-forward is three 0.27 GB weights.
  if (gate) gate(l.down_weights, h);
  return a + lora_linear(l.down_proj, h, sink_);
}

torch::Tensor DecoderBody::forward(torch::Tensor x, const torch::Tensor& cos,
                                   const torch::Tensor& sin, const torch::Tensor& real,
                                   bool training, const ClassifierImpl::WeightGate& gate,
                                   bool recompute) {
  const std::int64_t t = x.size(1);
  // Causal and not padding; every token may see itself, so a pad's row has a key and no NaN.
  const auto bool_options = real.options();
  const torch::Tensor causal = torch::ones({t, t}, bool_options).tril();
  const torch::Tensor allowed =
      (causal.unsqueeze(0) & real.unsqueeze(1)) | torch::eye(t, bool_options).unsqueeze(0);
  const torch::Tensor allowed4 = allowed.unsqueeze(1);  // [B, 1, T, T]
  for (Layer& l : layers_) {
    if (gate) gate(l.attention_weights, x);
    x = run_layer(
        [this, &l, cos, sin, allowed4, training, gate](const torch::Tensor& h) {
          return layer_forward(l, h, cos, sin, allowed4, training, gate);
        },
        x, recompute);
  }
  if (gate) gate({norm_}, x);
  return rms_norm(x, norm_, config_->rms_norm_eps);
}

torch::Tensor DecoderBody::last_token(const torch::Tensor& hidden, const torch::Tensor& real) {
  // The last token that is not padding: right or left padding alike.
  const std::int64_t t = hidden.size(1);
  const torch::Tensor positions = torch::arange(t, real.options().dtype(torch::kInt64));
  const torch::Tensor last = (positions * real.to(torch::kInt64)).argmax(1);
  return hidden.gather(1, last.view({-1, 1, 1}).expand({hidden.size(0), 1, hidden.size(2)}))
      .squeeze(1);
}

}  // namespace slimtrain::model::hf
