#include "slimtrain/model/hf/vit.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/attention.hpp"
#include "slimtrain/model/lora.hpp"

namespace slimtrain::model::hf {
namespace {

namespace nn = torch::nn;

std::shared_ptr<const HfConfig> read_vit_config(const ConfigReader& r) {
  auto c = std::make_shared<ViTConfig>();
  read_base(r, *c);
  c->intermediate_size = r.size("intermediate_size");
  c->image_size = r.size("image_size");
  c->patch_size = r.size("patch_size");
  c->num_channels = r.size("num_channels");
  if (c->image_size % c->patch_size != 0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": image_size ", c->image_size,
                    " is not a multiple of patch_size ", c->patch_size);
  r.refuse(!r.flag_or("qkv_bias", true), "qkv_bias", "ViT's q, k and v have biases");
  c->hidden_act = r.activation_or("hidden_act", "gelu");
  c->layer_norm_eps = r.number_or("layer_norm_eps", 1e-12);
  c->hidden_dropout_prob = r.probability_or("hidden_dropout_prob", 0.0);
  c->attention_probs_dropout_prob = r.probability_or("attention_probs_dropout_prob", 0.0);
  return c;
}

}  // namespace

std::string ViTConfig::describe_more() const {
  return " image " + std::to_string(num_channels) + "x" + std::to_string(image_size) + "x" +
         std::to_string(image_size) + " patch " + std::to_string(patch_size);
}

ViTForImageClassification::ViTForImageClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<ViTConfig>(spec)) {
  const ViTConfig& c = *config_;
  const auto shape = image_shape(spec);
  if (shape[0] != c.num_channels || shape[1] != c.image_size || shape[2] != c.image_size)
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": the checkpoint takes ",
                    c.num_channels, "x", c.image_size, "x", c.image_size,
                    " images; the data's are ", shape[0], "x", shape[1], "x", shape[2],
                    " (prep images --size ", c.image_size, "x", c.image_size, " --channels ",
                    c.num_channels, ")");
  const std::int64_t h = c.hidden_size, grid = c.image_size / c.patch_size;
  const double init = c.initializer_range, eps = c.layer_norm_eps;
  auto base = group(*this, "vit");
  auto embeddings = group(*base, "embeddings");
  {
    torch::NoGradGuard no_grad;
    cls_token_ = embeddings->register_parameter("cls_token", torch::zeros({1, 1, h}));
    position_embeddings_ = embeddings->register_parameter("position_embeddings",
                                                          torch::empty({1, grid * grid + 1, h}));
    torch::nn::init::normal_(position_embeddings_, 0.0, init);
  }
  projection_ =
      group(*embeddings, "patch_embeddings")
          ->register_module(
              "projection",
              nn::Conv2d(nn::Conv2dOptions(c.num_channels, h, c.patch_size).stride(c.patch_size)));
  auto list = group(*base, "encoder")->register_module("layer", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = group(*block, "attention");
    auto self = group(*attention, "attention");
    Layer l;
    l.query = add_linear(*self, "query", h, h, init);
    l.key = add_linear(*self, "key", h, h, init);
    l.value = add_linear(*self, "value", h, h, init);
    l.attention_out = add_linear(*group(*attention, "output"), "dense", h, h, init);
    l.intermediate =
        add_linear(*group(*block, "intermediate"), "dense", h, c.intermediate_size, init);
    l.output = add_linear(*group(*block, "output"), "dense", c.intermediate_size, h, init);
    l.layernorm_before = add_norm(*block, "layernorm_before", h, eps);
    l.layernorm_after = add_norm(*block, "layernorm_after", h, eps);
    layer_.push_back(l);
  }
  layernorm_ = add_norm(*base, "layernorm", h, eps);
  classifier_ = add_linear(*this, "classifier", h, spec.num_classes, init);
}

std::string ViTForImageClassification::peft_adapter_refusal() const {
  // Checked with PEFT 0.21 on transformers 5.24, whose ViT has vit.layers.N.attention.q_proj and
  // mlp.fc1 where the checkpoints (and transformers 4) have vit.encoder.layer.N.attention.
  // attention.query: an adapter under either name fails on the other version's model.
  return "PEFT names a ViT adapter by transformers' module paths, which transformers 5 renamed "
         "(vit.encoder.layer.N.attention.attention.query became vit.layers.N.attention.q_proj), "
         "so no one adapter loads on both";
}

torch::Tensor ViTForImageClassification::layer_forward(Layer& l, const torch::Tensor& x) {
  const ViTConfig& c = *config_;
  const std::int64_t b = x.size(0), t = x.size(1), heads = c.num_attention_heads;
  const std::int64_t d = c.hidden_size / heads;
  const torch::Tensor n = l.layernorm_before->forward(x);
  auto split = [&](nn::Linear& proj) {
    return lora_linear(proj, n).view({b, t, heads, d}).transpose(1, 2);
  };
  const double p = is_training() ? c.attention_probs_dropout_prob : 0.0;
  const torch::Tensor context = attention(split(l.query), split(l.key), split(l.value), {}, true, p)
                                    .transpose(1, 2)
                                    .reshape({b, t, c.hidden_size});
  const double drop = c.hidden_dropout_prob;
  const torch::Tensor a =
      x + torch::dropout(lora_linear(l.attention_out, context), drop, is_training());
  const torch::Tensor f = lora_linear(
      l.output,
      activation(c.hidden_act, lora_linear(l.intermediate, l.layernorm_after->forward(a))));
  return a + torch::dropout(f, drop, is_training());
}

torch::Tensor ViTForImageClassification::encode(const torch::Tensor& x) {
  const torch::Tensor images = as_images(x);
  torch::Tensor tokens = projection_->forward(images).flatten(2).transpose(1, 2);  // [B, N, H]
  tokens = torch::cat({cls_token_.expand({tokens.size(0), 1, tokens.size(2)}), tokens}, 1);
  tokens =
      torch::dropout(tokens + position_embeddings_, config_->hidden_dropout_prob, is_training());
  for (Layer& l : layer_)
    tokens = run_layer([this, &l](const torch::Tensor& h) { return layer_forward(l, h); }, tokens);
  return layernorm_->forward(tokens).select(1, 0);  // the CLS token
}

Output ViTForImageClassification::forward(const torch::Tensor& x, const torch::Tensor& y) {
  return make_output(classifier_->forward(encode(x)), y);
}

torch::Tensor ViTForImageClassification::embed(const torch::Tensor& x) {
  return encode(x);
}

HfArchitecture vit_architecture() {
  HfArchitecture a;
  a.model_type = "vit";
  a.export_name = "ViTForImageClassification";
  a.reads_architectures = {"ViT"};
  a.reads = Reads::images;
  a.parse = read_vit_config;
  a.build = [](const ModelSpec& spec) { return std::make_shared<ViTForImageClassification>(spec); };
  return a;
}

}  // namespace slimtrain::model::hf
