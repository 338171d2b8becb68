#include "slimtrain/model/hf_decoder.hpp"

#include <torch/version.h>

#include <cmath>
#include <limits>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {
namespace {

namespace nn = torch::nn;

// An RMSNorm's weight, registered as transformers names it: PREFIX.weight.
torch::Tensor norm_weight(nn::Module& parent, const std::string& name, std::int64_t size) {
  return hf_group(parent, name)->register_parameter("weight", torch::ones({size}));
}

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

// The rotary inverse frequencies [head_dim / 2], scaled as the config's rope_type says, in
// transformers' order of float32 operations (modeling_rope_utils.py).
torch::Tensor rotary_frequencies(const HfConfig& c, const torch::TensorOptions& f32) {
  const double dim = static_cast<double>(c.head_dim);
  const torch::Tensor inv_freq =
      1.0 / torch::pow(c.rope_theta, torch::arange(0, c.head_dim, 2, f32) / dim);
  if (c.rope_type == "linear") return inv_freq / c.rope_factor;
  if (c.rope_type != "llama3") return inv_freq;
  // Llama 3.1: wavelengths longer than the pretrained context / low_freq_factor are stretched
  // by the factor, those shorter than it / high_freq_factor kept, the ones between blended.
  const double context = static_cast<double>(c.rope_original_max_positions);
  const double low = c.rope_low_freq_factor, high = c.rope_high_freq_factor;
  const torch::Tensor wavelength = 2 * 3.141592653589793 / inv_freq;  // math.pi
  torch::Tensor scaled =
      torch::where(wavelength > context / low, inv_freq / c.rope_factor, inv_freq);
  const torch::Tensor smooth = (context / wavelength - low) / (high - low);
  const torch::Tensor blended = (1 - smooth) * scaled / c.rope_factor + smooth * scaled;
  const torch::Tensor medium = (wavelength >= context / high) & (wavelength <= context / low);
  return torch::where(medium, blended, scaled);
}

}  // namespace

HfDecoderImpl::HfDecoderImpl(const ModelSpec& spec) : HfClassifierImpl(spec, hf_config_of(spec)) {
  const HfConfig& c = config();
  if (spec.vocab_size > c.vocab_size)
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": the data's input_ids have ",
                    spec.vocab_size, " token ids but the model's vocabulary has ", c.vocab_size,
                    "; prepare the text with this checkpoint's tokenizer (--tokenizer)");
  const std::int64_t h = c.hidden_size, d = c.head_dim;
  auto base = hf_group(*this, "model");
  embed_tokens_ = base->register_module("embed_tokens", nn::Embedding(c.vocab_size, h));
  {
    torch::NoGradGuard no_grad;
    torch::nn::init::normal_(embed_tokens_->weight, 0.0, c.initializer_range);
  }
  auto list = base->register_module("layers", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = hf_group(*block, "self_attn");
    Layer l;
    l.q = add_linear(*attention, "q_proj", h, c.num_attention_heads * d, c.attention_bias);
    l.k = add_linear(*attention, "k_proj", h, c.num_key_value_heads * d, c.attention_bias);
    l.v = add_linear(*attention, "v_proj", h, c.num_key_value_heads * d, c.attention_bias);
    l.o = add_linear(*attention, "o_proj", c.num_attention_heads * d, h, false);
    auto mlp = hf_group(*block, "mlp");
    l.gate = add_linear(*mlp, "gate_proj", h, c.intermediate_size, false);
    l.up = add_linear(*mlp, "up_proj", h, c.intermediate_size, false);
    l.down = add_linear(*mlp, "down_proj", c.intermediate_size, h, false);
    l.input_norm = norm_weight(*block, "input_layernorm", h);
    l.post_norm = norm_weight(*block, "post_attention_layernorm", h);
    layers_.push_back(l);
  }
  norm_ = norm_weight(*base, "norm", h);
  score_ = add_linear(*this, "score", h, spec.num_classes, false);
}

torch::Tensor HfDecoderImpl::rms_norm(const torch::Tensor& x, const torch::Tensor& weight) const {
  const torch::Tensor f = x.to(torch::kFloat32);
  const torch::Tensor normed = f * torch::rsqrt(f.pow(2).mean(-1, true) + config().rms_norm_eps);
  return weight * normed.to(x.scalar_type());
}

torch::Tensor HfDecoderImpl::layer_forward(Layer& l, const torch::Tensor& x,
                                           const torch::Tensor& cos, const torch::Tensor& sin,
                                           const torch::Tensor& allowed) {
  const HfConfig& c = config();
  const std::int64_t b = x.size(0), t = x.size(1), d = c.head_dim;
  const torch::Tensor n = rms_norm(x, l.input_norm);
  auto heads = [&](nn::Linear& proj, std::int64_t count) {
    return proj->forward(n).view({b, t, count, d}).transpose(1, 2);
  };
  const torch::Tensor q = rotate(heads(l.q, c.num_attention_heads), cos, sin);
  torch::Tensor k = rotate(heads(l.k, c.num_key_value_heads), cos, sin);
  torch::Tensor v = heads(l.v, c.num_key_value_heads);
  const std::int64_t groups = c.num_attention_heads / c.num_key_value_heads;
  if (groups > 1) {  // each key and value head serves `groups` query heads
    k = k.repeat_interleave(groups, 1);
    v = v.repeat_interleave(groups, 1);
  }
  const double p = is_training() ? c.attention_dropout : 0.0;
  const torch::Tensor context =
      attend(q, k, v, allowed, p).transpose(1, 2).reshape({b, t, c.num_attention_heads * d});
  const torch::Tensor a = x + l.o->forward(context);
  const torch::Tensor m = rms_norm(a, l.post_norm);
  return a + l.down->forward(torch::silu(l.gate->forward(m)) * l.up->forward(m));
}

Output HfDecoderImpl::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output HfDecoderImpl::forward_named(const NamedInputs& inputs, const torch::Tensor& y) {
  const TokenInputs in = token_inputs(inputs, spec().model_option());
  const HfConfig& c = config();
  const std::int64_t t = in.ids.size(1);
  if (t > c.max_position_embeddings)
    SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": a batch holds sequences of ",
                    t, " tokens, past the model's ", c.max_position_embeddings,
                    " positions; cut them in prep (--max-length)");
  torch::Tensor x = embed_tokens_->forward(in.ids);
  // Rotary angles of positions 0..T-1, in float32 as transformers computes them.
  const auto f32 = x.options().dtype(torch::kFloat32);
  const torch::Tensor inv_freq = rotary_frequencies(c, f32);
  const torch::Tensor angles = torch::outer(torch::arange(t, f32), inv_freq);
  const torch::Tensor both = torch::cat({angles, angles}, -1);
  const torch::Tensor cos = both.cos().to(x.scalar_type()), sin = both.sin().to(x.scalar_type());
  // Causal and not padding; every token may see itself, so a pad's row has a key and no NaN.
  const torch::Tensor real = in.mask.to(torch::kBool);
  const auto bool_options = real.options();
  const torch::Tensor causal = torch::ones({t, t}, bool_options).tril();
  const torch::Tensor allowed =
      (causal.unsqueeze(0) & real.unsqueeze(1)) | torch::eye(t, bool_options).unsqueeze(0);
  const torch::Tensor allowed4 = allowed.unsqueeze(1);  // [B, 1, T, T]
  for (Layer& l : layers_) x = layer_forward(l, x, cos, sin, allowed4);
  x = rms_norm(x, norm_);
  // The last token that is not padding: right or left padding alike.
  const torch::Tensor positions = torch::arange(t, in.mask.options().dtype(torch::kInt64));
  const torch::Tensor last = (positions * real.to(torch::kInt64)).argmax(1);
  const torch::Tensor pooled =
      x.gather(1, last.view({-1, 1, 1}).expand({x.size(0), 1, x.size(2)})).squeeze(1);
  return make_output(score_->forward(pooled), y);
}

torch::Tensor HfDecoderImpl::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

}  // namespace slimtrain::model
