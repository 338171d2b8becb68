#include "slimtrain/model/hf_classifier.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/hf_bert.hpp"
#include "slimtrain/model/hf_decoder.hpp"
#include "slimtrain/model/hf_vit.hpp"

namespace slimtrain::model {

namespace nn = torch::nn;

nn::Linear HfClassifierImpl::add_linear(nn::Module& parent, const std::string& name,
                                        std::int64_t in, std::int64_t out, bool bias) {
  auto layer = parent.register_module(name, nn::Linear(nn::LinearOptions(in, out).bias(bias)));
  // transformers' _init_weights: N(0, initializer_range) weights, zero biases.
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(layer->weight, 0.0, config_.initializer_range);
  if (bias) layer->bias.zero_();
  return layer;
}

nn::LayerNorm HfClassifierImpl::add_norm(nn::Module& parent, const std::string& name) {
  return parent.register_module(
      name, nn::LayerNorm(nn::LayerNormOptions({config_.hidden_size}).eps(config_.layer_norm_eps)));
}

torch::Tensor HfClassifierImpl::activation(const torch::Tensor& x) const {
  const std::string& act = config_.hidden_act;
  if (act == "gelu") return torch::gelu(x);
  if (act == "relu") return torch::relu(x);
  if (act == "silu" || act == "swish") return torch::silu(x);
  return torch::gelu(x, "tanh");  // gelu_new, gelu_pytorch_tanh
}

std::shared_ptr<nn::Module> hf_group(nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<nn::Module>());
}

HfConfig hf_config_of(const ModelSpec& spec) {
  try {
    return parse_hf_config(nlohmann::json::parse(spec.hf_config), "--model " + spec.model_option());
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(),
                    ": its config is not JSON: ", e.what());
  }
}

std::shared_ptr<ClassifierImpl> make_hf_model(const ModelSpec& spec) {
  const HfConfig config = hf_config_of(spec);
  if (config.is_vit()) return std::make_shared<HfVitImpl>(spec);
  if (config.is_decoder()) return std::make_shared<HfDecoderImpl>(spec);
  return std::make_shared<HfBertImpl>(spec);
}

}  // namespace slimtrain::model
