#include "slimtrain/model/hf/decoder.hpp"

#include <torch/version.h>

#include <cmath>
#include <limits>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model::hf {
namespace {

namespace nn = torch::nn;

double positive_number(const ConfigReader& r, const char* key) {
  const double v = r.number_or(key, 0.0);
  if (!(v > 0.0))
    SLIMTRAIN_THROW(ConfigError, r.where(), ": rotary scaling needs \"", key, "\" above 0; it is ",
                    r.has(key) ? r.json()[key].dump() : "missing");
  return v;
}

// Rotary positions: transformers 5 keeps rope_theta and the scaling in rope_parameters; 4.x
// keeps rope_theta beside it and the scaling in rope_scaling ("type" in older files).
RopeConfig read_rope(const ConfigReader& r, std::int64_t max_positions) {
  const ConfigReader rope =
      r.child(r.json().value("rope_parameters", nlohmann::json()).is_object() ? "rope_parameters"
                                                                              : "rope_scaling");
  RopeConfig c;
  c.rope_type = rope.text_or("rope_type", rope.text_or("type", "default"));
  c.rope_theta = rope.has("rope_theta") ? rope.number_or("rope_theta", 10000.0)
                                        : r.number_or("rope_theta", 10000.0);
  const double partial = rope.has("partial_rotary_factor")
                             ? rope.number_or("partial_rotary_factor", 1.0)
                             : r.number_or("partial_rotary_factor", 1.0);
  if (partial != 1.0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": partial_rotary_factor ", partial,
                    " is not implemented (rotary positions on the whole head)");
  if (c.rope_type == "default") return c;
  if (c.rope_type != "linear" && c.rope_type != "llama3")
    SLIMTRAIN_THROW(ConfigError, r.where(), ": rotary positions of type ", c.rope_type,
                    " are not implemented (default, linear and llama3)");
  c.factor = positive_number(rope, "factor");
  if (c.rope_type == "linear") return c;
  c.low_freq_factor = positive_number(rope, "low_freq_factor");
  c.high_freq_factor = positive_number(rope, "high_freq_factor");
  if (c.high_freq_factor <= c.low_freq_factor)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": rotary scaling's high_freq_factor ",
                    c.high_freq_factor, " is not above its low_freq_factor ", c.low_freq_factor);
  // As transformers: the model's own length when the file does not say.
  c.original_max_position_embeddings =
      rope.size_or("original_max_position_embeddings", max_positions);
  return c;
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

std::shared_ptr<DecoderConfig> read_decoder_config(const ConfigReader& r) {
  auto c = std::make_shared<DecoderConfig>();
  read_base(r, *c);
  c->intermediate_size = r.size("intermediate_size");
  c->vocab_size = r.size("vocab_size");
  c->max_position_embeddings = r.size("max_position_embeddings");
  c->num_key_value_heads = r.size_or("num_key_value_heads", c->num_attention_heads);
  if (c->num_attention_heads % c->num_key_value_heads != 0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": num_attention_heads ", c->num_attention_heads,
                    " is not a multiple of num_key_value_heads ", c->num_key_value_heads);
  c->head_dim = r.size_or("head_dim", c->hidden_size / c->num_attention_heads);
  if (c->head_dim % 2 != 0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": head_dim ", c->head_dim, " is odd (rotary pairs)");
  c->hidden_act = r.activation_or("hidden_act", "silu");
  c->rms_norm_eps = r.number_or("rms_norm_eps", 1e-6);
  c->attention_dropout = r.probability_or("attention_dropout", 0.0);
  c->rope = read_rope(r, c->max_position_embeddings);
  return c;
}

DecoderForSequenceClassification::DecoderForSequenceClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<DecoderConfig>(spec)) {
  const DecoderConfig& c = *config_;
  check_vocabulary(spec, c.vocab_size);
  const std::int64_t h = c.hidden_size, d = c.head_dim, inner = c.intermediate_size;
  const double init = c.initializer_range;
  auto base = group(*this, "model");
  embed_tokens_ = add_embedding(*base, "embed_tokens", c.vocab_size, h, init);
  auto list = base->register_module("layers", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = group(*block, "self_attn");
    Layer l;
    l.q_proj = add_linear(*attention, "q_proj", h, c.num_attention_heads * d, init, c.qkv_bias);
    l.k_proj = add_linear(*attention, "k_proj", h, c.num_key_value_heads * d, init, c.qkv_bias);
    l.v_proj = add_linear(*attention, "v_proj", h, c.num_key_value_heads * d, init, c.qkv_bias);
    l.o_proj = add_linear(*attention, "o_proj", c.num_attention_heads * d, h, init, c.o_bias);
    auto mlp = group(*block, "mlp");
    l.gate_proj = add_linear(*mlp, "gate_proj", h, inner, init, c.mlp_bias);
    l.up_proj = add_linear(*mlp, "up_proj", h, inner, init, c.mlp_bias);
    l.down_proj = add_linear(*mlp, "down_proj", inner, h, init, c.mlp_bias);
    l.input_layernorm = add_rms_weight(*block, "input_layernorm", h);
    l.post_attention_layernorm = add_rms_weight(*block, "post_attention_layernorm", h);
    layers_.push_back(l);
  }
  norm_ = add_rms_weight(*base, "norm", h);
  score_ = add_linear(*this, "score", h, spec.num_classes, init, false);
}

torch::Tensor DecoderForSequenceClassification::rms_norm(const torch::Tensor& x,
                                                         const torch::Tensor& weight) const {
  const torch::Tensor f = x.to(torch::kFloat32);
  const torch::Tensor normed = f * torch::rsqrt(f.pow(2).mean(-1, true) + config_->rms_norm_eps);
  return weight * normed.to(x.scalar_type());
}

torch::Tensor DecoderForSequenceClassification::layer_forward(Layer& l, const torch::Tensor& x,
                                                              const torch::Tensor& cos,
                                                              const torch::Tensor& sin,
                                                              const torch::Tensor& allowed) {
  const DecoderConfig& c = *config_;
  const std::int64_t b = x.size(0), t = x.size(1), d = c.head_dim;
  const torch::Tensor n = rms_norm(x, l.input_layernorm);
  auto heads = [&](nn::Linear& proj, std::int64_t count) {
    return proj->forward(n).view({b, t, count, d}).transpose(1, 2);
  };
  const torch::Tensor q = rotate(heads(l.q_proj, c.num_attention_heads), cos, sin);
  torch::Tensor k = rotate(heads(l.k_proj, c.num_key_value_heads), cos, sin);
  torch::Tensor v = heads(l.v_proj, c.num_key_value_heads);
  const std::int64_t groups = c.num_attention_heads / c.num_key_value_heads;
  if (groups > 1) {  // each key and value head serves `groups` query heads
    k = k.repeat_interleave(groups, 1);
    v = v.repeat_interleave(groups, 1);
  }
  const double p = is_training() ? c.attention_dropout : 0.0;
  const torch::Tensor context =
      attend(q, k, v, allowed, p).transpose(1, 2).reshape({b, t, c.num_attention_heads * d});
  const torch::Tensor a = x + l.o_proj->forward(context);
  const torch::Tensor m = rms_norm(a, l.post_attention_layernorm);
  return a + l.down_proj->forward(activation(c.hidden_act, l.gate_proj->forward(m)) *
                                  l.up_proj->forward(m));
}

Output DecoderForSequenceClassification::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output DecoderForSequenceClassification::forward_named(const NamedInputs& inputs,
                                                       const torch::Tensor& y) {
  const DecoderConfig& c = *config_;
  const TokenInputs in = token_inputs(fit_padding(inputs, c.max_tokens()), spec().model_option());
  const std::int64_t t = in.ids.size(1);
  check_length(spec(), t, c.max_tokens());
  torch::Tensor x = embed_tokens_->forward(in.ids);
  // Rotary angles of positions 0..T-1, in float32 as transformers computes them.
  const auto f32 = x.options().dtype(torch::kFloat32);
  const torch::Tensor angles = torch::outer(torch::arange(t, f32), rotary_frequencies(c, f32));
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

torch::Tensor DecoderForSequenceClassification::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

HfArchitecture decoder_architecture(
    const std::string& model_type, const std::string& prefix,
    std::function<std::shared_ptr<const HfConfig>(const ConfigReader&)> parse) {
  HfArchitecture a;
  a.model_type = model_type;
  a.export_name = prefix + "ForSequenceClassification";
  a.reads_architectures = {prefix};
  a.parse = std::move(parse);
  a.build = [](const ModelSpec& spec) {
    return std::make_shared<DecoderForSequenceClassification>(spec);
  };
  return a;
}

}  // namespace slimtrain::model::hf
