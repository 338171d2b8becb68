#include "slimtrain/model/hf_vit.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/attention.hpp"

namespace slimtrain::model {

namespace nn = torch::nn;

HfVitImpl::HfVitImpl(const ModelSpec& spec) : HfClassifierImpl(spec, hf_config_of(spec)) {
  const HfConfig& c = config();
  const auto shape = image_shape(spec);
  if (shape[0] != c.num_channels || shape[1] != c.image_size || shape[2] != c.image_size)
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": the checkpoint takes ",
                    c.num_channels, "x", c.image_size, "x", c.image_size,
                    " images; the data's are ", shape[0], "x", shape[1], "x", shape[2],
                    " (prep images --size ", c.image_size, "x", c.image_size, " --channels ",
                    c.num_channels, ")");
  const std::int64_t h = c.hidden_size, grid = c.image_size / c.patch_size;
  auto base = hf_group(*this, "vit");
  auto embeddings = hf_group(*base, "embeddings");
  {
    torch::NoGradGuard no_grad;
    cls_token_ = embeddings->register_parameter("cls_token", torch::zeros({1, 1, h}));
    positions_ = embeddings->register_parameter("position_embeddings",
                                                torch::empty({1, grid * grid + 1, h}));
    torch::nn::init::normal_(positions_, 0.0, c.initializer_range);
  }
  patches_ =
      hf_group(*embeddings, "patch_embeddings")
          ->register_module(
              "projection",
              nn::Conv2d(nn::Conv2dOptions(c.num_channels, h, c.patch_size).stride(c.patch_size)));
  auto list = hf_group(*base, "encoder")->register_module("layer", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = hf_group(*block, "attention");
    auto self = hf_group(*attention, "attention");
    Layer l;
    l.query = add_linear(*self, "query", h, h);
    l.key = add_linear(*self, "key", h, h);
    l.value = add_linear(*self, "value", h, h);
    l.attention_out = add_linear(*hf_group(*attention, "output"), "dense", h, h);
    l.intermediate = add_linear(*hf_group(*block, "intermediate"), "dense", h, c.intermediate_size);
    l.output = add_linear(*hf_group(*block, "output"), "dense", c.intermediate_size, h);
    l.before = add_norm(*block, "layernorm_before");
    l.after = add_norm(*block, "layernorm_after");
    layers_.push_back(l);
  }
  norm_ = add_norm(*base, "layernorm");
  classifier_ = add_linear(*this, "classifier", h, spec.num_classes);
}

torch::Tensor HfVitImpl::layer_forward(Layer& l, const torch::Tensor& x) {
  const std::int64_t b = x.size(0), t = x.size(1), heads = config().num_attention_heads;
  const std::int64_t d = config().hidden_size / heads;
  const torch::Tensor n = l.before->forward(x);
  auto split = [&](nn::Linear& proj) {
    return proj->forward(n).view({b, t, heads, d}).transpose(1, 2);
  };
  const double p = is_training() ? config().attention_dropout : 0.0;
  const torch::Tensor context = attention(split(l.query), split(l.key), split(l.value), {}, true, p)
                                    .transpose(1, 2)
                                    .reshape({b, t, config().hidden_size});
  const double drop = config().hidden_dropout;
  const torch::Tensor a =
      x + torch::dropout(l.attention_out->forward(context), drop, is_training());
  const torch::Tensor f =
      l.output->forward(activation(l.intermediate->forward(l.after->forward(a))));
  return a + torch::dropout(f, drop, is_training());
}

torch::Tensor HfVitImpl::encode(const torch::Tensor& x) {
  const torch::Tensor images = as_images(x);
  torch::Tensor tokens = patches_->forward(images).flatten(2).transpose(1, 2);  // [B, N, H]
  tokens = torch::cat({cls_token_.expand({tokens.size(0), 1, tokens.size(2)}), tokens}, 1);
  tokens = torch::dropout(tokens + positions_, config().hidden_dropout, is_training());
  for (Layer& l : layers_) tokens = layer_forward(l, tokens);
  return norm_->forward(tokens).select(1, 0);  // the CLS token
}

Output HfVitImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  return make_output(classifier_->forward(encode(x)), y);
}

torch::Tensor HfVitImpl::embed(const torch::Tensor& x) {
  return encode(x);
}

}  // namespace slimtrain::model
