#include "slimtrain/model/hf_bert.hpp"

#include <cmath>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/attention.hpp"
#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model {
namespace {

namespace nn = torch::nn;

std::shared_ptr<nn::Module> group(nn::Module& parent, const std::string& name) {
  return hf_group(parent, name);
}

}  // namespace

HfBertImpl::HfBertImpl(const ModelSpec& spec)
    : HfClassifierImpl(spec, hf_config_of(spec)), inputs_{"input_ids", "attention_mask"} {
  if (spec.vocab_size > config().vocab_size)
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": the data's input_ids have ",
                    spec.vocab_size, " token ids but the model's vocabulary has ",
                    config().vocab_size,
                    "; prepare the text with this checkpoint's tokenizer (--tokenizer)");
  const std::int64_t h = config().hidden_size;
  const bool distil = config().model_type == "distilbert";
  auto base = group(*this, config().model_type);
  auto embeddings = group(*base, "embeddings");
  words_ = embeddings->register_module("word_embeddings",
                                       nn::Embedding(nn::EmbeddingOptions(config().vocab_size, h)));
  positions_ = embeddings->register_module("position_embeddings",
                                           nn::Embedding(config().max_position_embeddings, h));
  if (!distil)  // DistilBERT has no token types
    token_types_ = embeddings->register_module("token_type_embeddings",
                                               nn::Embedding(config().type_vocab_size, h));
  {
    torch::NoGradGuard no_grad;
    for (auto* e : {&words_, &positions_, &token_types_})
      if (!e->is_empty()) torch::nn::init::normal_((*e)->weight, 0.0, config().initializer_range);
  }
  if (config().frozen_positions) positions_->weight.set_requires_grad(false);  // sinusoidal
  embedding_norm_ = add_norm(*embeddings);
  // The same post-norm layers under each family's names.
  auto list = distil ? group(*base, "transformer")->register_module("layer", nn::ModuleList())
                     : group(*base, "encoder")->register_module("layer", nn::ModuleList());
  const std::int64_t inner = config().intermediate_size;
  for (std::int64_t i = 0; i < config().num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = group(*block, "attention");
    Layer l;
    if (distil) {
      l.query = add_linear(*attention, "q_lin", h, h);
      l.key = add_linear(*attention, "k_lin", h, h);
      l.value = add_linear(*attention, "v_lin", h, h);
      l.attention_out = add_linear(*attention, "out_lin", h, h);
      l.attention_norm = add_norm(*block, "sa_layer_norm");
      auto ffn = group(*block, "ffn");
      l.intermediate = add_linear(*ffn, "lin1", h, inner);
      l.output = add_linear(*ffn, "lin2", inner, h);
      l.output_norm = add_norm(*block, "output_layer_norm");
    } else {
      auto self = group(*attention, "self");
      l.query = add_linear(*self, "query", h, h);
      l.key = add_linear(*self, "key", h, h);
      l.value = add_linear(*self, "value", h, h);
      auto attention_output = group(*attention, "output");
      l.attention_out = add_linear(*attention_output, "dense", h, h);
      l.attention_norm = add_norm(*attention_output);
      l.intermediate = add_linear(*group(*block, "intermediate"), "dense", h, inner);
      auto output = group(*block, "output");
      l.output = add_linear(*output, "dense", inner, h);
      l.output_norm = add_norm(*output);
    }
    layers_.push_back(l);
  }
  if (config().model_type == "roberta") {
    auto head = group(*this, "classifier");
    pooler_ = add_linear(*head, "dense", h, h);
    classifier_ = add_linear(*head, "out_proj", h, spec.num_classes);
  } else if (distil) {
    pooler_ = add_linear(*this, "pre_classifier", h, h);
    classifier_ = add_linear(*this, "classifier", h, spec.num_classes);
  } else {
    pooler_ = add_linear(*group(*base, "pooler"), "dense", h, h);
    classifier_ = add_linear(*this, "classifier", h, spec.num_classes);
  }
}

std::vector<std::string> HfBertImpl::head_names() const {
  if (config().model_type == "roberta")
    return {"classifier.dense.weight", "classifier.dense.bias", "classifier.out_proj.weight",
            "classifier.out_proj.bias"};
  if (config().model_type == "distilbert")
    return {"pre_classifier.weight", "pre_classifier.bias", "classifier.weight", "classifier.bias"};
  return {"classifier.weight", "classifier.bias"};
}

torch::Tensor HfBertImpl::layer_forward(Layer& l, const torch::Tensor& x,
                                        const torch::Tensor& padding) {
  const std::int64_t b = x.size(0), t = x.size(1), heads = config().num_attention_heads;
  const std::int64_t d = config().hidden_size / heads;
  auto split = [&](nn::Linear& proj) {
    return proj->forward(x).view({b, t, heads, d}).transpose(1, 2);
  };
  const double p = is_training() ? config().attention_dropout : 0.0;
  const torch::Tensor context =
      attention(split(l.query), split(l.key), split(l.value), padding, true, p)
          .transpose(1, 2)
          .reshape({b, t, config().hidden_size});
  const double drop = config().hidden_dropout;
  const torch::Tensor a = l.attention_norm->forward(
      torch::dropout(l.attention_out->forward(context), drop, is_training()) + x);
  const torch::Tensor f = l.output->forward(activation(l.intermediate->forward(a)));
  return l.output_norm->forward(torch::dropout(f, drop, is_training()) + a);
}

torch::Tensor HfBertImpl::encode(const torch::Tensor& ids, const torch::Tensor& mask,
                                 const torch::Tensor& token_types) {
  const std::int64_t t = ids.size(1);
  if (t > config().max_length())
    SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": a batch holds sequences of ",
                    t, " tokens, past the model's ", config().max_length(),
                    " positions; cut them in prep (--max-length ", config().max_length(), ")");
  torch::Tensor positions;
  if (config().model_type == "roberta") {
    // RoBERTa numbers the tokens that are not padding from pad_token_id + 1, as transformers does.
    const torch::Tensor real = ids.ne(config().pad_token_id).to(torch::kInt64);
    positions = real.cumsum(1) * real + config().pad_token_id;
  } else {
    positions = torch::arange(t, ids.options().dtype(torch::kInt64)).unsqueeze(0);
  }
  torch::Tensor x = words_->forward(ids) + positions_->forward(positions);
  if (!token_types_.is_empty())
    x = x + token_types_->forward(token_types.defined() ? token_types
                                                        : torch::zeros_like(ids, ids.options()));
  x = torch::dropout(embedding_norm_->forward(x), config().hidden_dropout, is_training());
  // A sequence with no token keeps its first position, or no key would be left to attend to.
  torch::Tensor padding = mask == 0;
  padding.select(1, 0).masked_fill_(mask.sum(1) == 0, false);
  for (Layer& l : layers_) x = layer_forward(l, x, padding);
  return x;
}

std::vector<std::string> HfBertImpl::optional_input_names() const {
  if (token_types_.is_empty() || config().type_vocab_size < 2) return {};
  return {"token_type_ids"};
}

Output HfBertImpl::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output HfBertImpl::forward_named(const NamedInputs& inputs, const torch::Tensor& y) {
  const TokenInputs in = token_inputs(inputs, spec().model_option());
  const torch::Tensor hidden = encode(in.ids, in.mask, in.token_types);
  const double drop = config().classifier_dropout;
  torch::Tensor first = hidden.select(1, 0);
  torch::Tensor pooled;
  if (config().model_type == "roberta")
    pooled = torch::tanh(pooler_->forward(torch::dropout(first, drop, is_training())));
  else if (config().model_type == "distilbert")  // pre_classifier, ReLU
    pooled = torch::relu(pooler_->forward(first));
  else
    pooled = torch::tanh(pooler_->forward(first));
  return make_output(classifier_->forward(torch::dropout(pooled, drop, is_training())), y);
}

torch::Tensor HfBertImpl::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

}  // namespace slimtrain::model
