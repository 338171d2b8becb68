#include "slimtrain/model/hf/hf_model.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/deferred_weights.hpp"

namespace slimtrain::model::hf {

namespace nn = torch::nn;

namespace {

// A parameter of an empty layer given `sizes` and no memory, keeping its identity.
void defer_shaped(torch::Tensor& parameter, torch::IntArrayRef sizes) {
  torch::NoGradGuard no_grad;
  parameter.set_data(without_memory(sizes, parameter.options()));
}

}  // namespace

nn::Linear add_linear(nn::Module& parent, const std::string& name, std::int64_t in,
                      std::int64_t out, double init, bool bias, bool filled_by_load) {
  if (filled_by_load) {
    // No random numbers drawn, no memory taken: an empty layer draws none, and is given its
    // shape after.
    auto layer = parent.register_module(name, nn::Linear(nn::LinearOptions(1, 0).bias(bias)));
    layer->options.in_features(in).out_features(out);
    defer_shaped(layer->weight, {out, in});
    if (bias) defer_shaped(layer->bias, {out});
    return layer;
  }
  auto layer = parent.register_module(name, nn::Linear(nn::LinearOptions(in, out).bias(bias)));
  // transformers' _init_weights: N(0, initializer_range) weights, zero biases.
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(layer->weight, 0.0, init);
  if (bias) layer->bias.zero_();
  return layer;
}

nn::LayerNorm add_norm(nn::Module& parent, const std::string& name, std::int64_t size, double eps) {
  return parent.register_module(name, nn::LayerNorm(nn::LayerNormOptions({size}).eps(eps)));
}

nn::Embedding add_embedding(nn::Module& parent, const std::string& name, std::int64_t count,
                            std::int64_t size, double init, bool filled_by_load) {
  if (filled_by_load) {  // as add_linear's
    auto table = parent.register_module(name, nn::Embedding(nn::EmbeddingOptions(0, size)));
    table->options.num_embeddings(count);
    defer_shaped(table->weight, {count, size});
    return table;
  }
  auto table = parent.register_module(name, nn::Embedding(nn::EmbeddingOptions(count, size)));
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(table->weight, 0.0, init);
  return table;
}

torch::Tensor add_rms_weight(nn::Module& parent, const std::string& name, std::int64_t size) {
  return group(parent, name)->register_parameter("weight", torch::ones({size}));
}

std::vector<std::string> HfModel::stored_names(const std::string& name) const {
  const std::string prefix = base_prefix();
  if (name.compare(0, prefix.size(), prefix) != 0) return {name};
  return {name, name.substr(prefix.size())};
}

std::shared_ptr<nn::Module> group(nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<nn::Module>());
}

torch::Tensor activation(const std::string& name, const torch::Tensor& x) {
  if (name == "gelu") return torch::gelu(x);
  if (name == "relu") return torch::relu(x);
  if (name == "silu" || name == "swish") return torch::silu(x);
  if (name == "quick_gelu") return x * torch::sigmoid(1.702 * x);
  return torch::gelu(x, "tanh");  // gelu_new, gelu_pytorch_tanh
}

void check_vocabulary(const ModelSpec& spec, std::int64_t vocab_size) {
  if (spec.vocab_size <= vocab_size) return;
  SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": the data's input_ids have ",
                  spec.vocab_size, " token ids but the model's vocabulary has ", vocab_size,
                  "; prepare the text with this checkpoint's tokenizer (--tokenizer)");
}

void check_length(const ModelSpec& spec, std::int64_t tokens, std::int64_t limit) {
  if (tokens <= limit) return;
  SLIMTRAIN_THROW(DataError, "--model ", spec.model_option(), ": a batch holds sequences of ",
                  tokens, " tokens, past the model's ", limit,
                  " positions; cut them in prep (--max-length ", limit, ")");
}

NamedInputs fit_padding(const NamedInputs& inputs, std::int64_t limit) {
  const torch::Tensor* mask = nullptr;
  for (const auto& [name, t] : inputs)
    if (name == "attention_mask") mask = &t;
  if (mask == nullptr || mask->dim() != 2 || mask->size(1) <= limit) return inputs;
  if (mask->narrow(1, limit, mask->size(1) - limit).any().item<bool>()) return inputs;
  NamedInputs cut;  // the token inputs only: an image's patches are never cut
  for (const auto& [name, t] : inputs) {
    const bool token = name == "input_ids" || name == "attention_mask" || name == "token_type_ids";
    cut.emplace_back(name, token ? t.narrow(1, 0, limit) : t);
  }
  return cut;
}

}  // namespace slimtrain::model::hf
